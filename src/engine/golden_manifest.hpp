#pragma once
// reference_outputs/manifest.json: every golden file, its provenance and its sha256.
//
//   { "files": { "<path under reference_outputs/>": {
//        "kind": "documented" | "generated",
//        documented: "source" (which lesson file) and "listing" (which listing printed it)
//        generated:  "generator" (script in reference_outputs/generators/ or `lessons accept`),
//                    "libraries" {name: version}, "seed"
//        "sha256": "<hex>" } } }
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vl {

class GoldenManifest {
 public:
  /// Reads `<root>/reference_outputs/manifest.json`; throws vl::InputError naming it if unreadable.
  explicit GoldenManifest(const std::filesystem::path& root);

  /// Each golden that is missing, differs from its sha256, or is not in the manifest; each
  /// problem names the file. Files ending in .received (pending review) and the scripts under
  /// generators/ are not goldens; a generator under reference_outputs/generators/ must exist.
  std::vector<std::string> verify() const;

  bool has(const std::string& relpath) const;
  bool is_documented(const std::string& relpath) const;
  const nlohmann::json& entry(const std::string& relpath) const;

  /// Record a reviewed golden: kind generated, by `lessons accept`, with its new sha256.
  void record_accepted(const std::string& relpath, const std::string& provenance);
  /// Write the manifest back (atomically: temp file, then rename).
  void save() const;

  std::filesystem::path dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path file_;
  nlohmann::json json_;
};

}  // namespace vl
