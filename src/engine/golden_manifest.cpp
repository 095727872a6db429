#include "engine/golden_manifest.hpp"

#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "numeric/sha256.hpp"

namespace vl {
namespace {
// The scripts that wrote the generated goldens: a folder of reference_outputs/, not goldens.
constexpr std::string_view kGenerators = "generators/";
}  // namespace

GoldenManifest::GoldenManifest(const std::filesystem::path& root)
    : dir_(root / "reference_outputs"), file_(dir_ / "manifest.json") {
  std::ifstream in(file_);
  if (!in) throw InputError(fmt::format("{}: cannot open the golden manifest", file_.string()));
  try {
    json_ = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", file_.string(), e.what()));
  }
  if (!json_.is_object() || !json_.contains("files") || !json_["files"].is_object())
    throw InputError(fmt::format("{}: expected an object with a \"files\" object", file_.string()));
  for (const auto& [path, e] : json_["files"].items()) {
    if (!e.is_object() || !e.contains("sha256") || !e["sha256"].is_string() || !e.contains("kind"))
      throw InputError(fmt::format("{}: entry '{}' lacks \"kind\" or \"sha256\"", file_.string(), path));
    const std::string kind = e["kind"];
    if (kind != "documented" && kind != "generated")
      throw InputError(fmt::format("{}: entry '{}': kind '{}' is neither documented nor generated", file_.string(), path, kind));
  }
}

std::vector<std::string> GoldenManifest::verify() const {
  std::vector<std::string> problems;
  // A generator's path in the manifest is from the project root: reference_outputs/generators/...
  const std::string generators_from_root = dir_.filename().string() + "/" + std::string(kGenerators);
  for (const auto& [rel, e] : json_["files"].items()) {
    const auto path = dir_ / rel;
    if (!std::filesystem::is_regular_file(path)) {
      problems.push_back(fmt::format("golden {}: listed in the manifest but missing", path.string()));
      continue;
    }
    // A generated golden names the script that wrote it (a path from the project root, under
    // reference_outputs/generators/); a name that is not there is provenance no one can rerun.
    if (e["kind"] == "generated" && e.contains("generator") && e["generator"].is_string()) {
      const std::string gen = e["generator"];
      if (gen.rfind(generators_from_root, 0) == 0 && !std::filesystem::is_regular_file(dir_.parent_path() / gen))
        problems.push_back(fmt::format("golden {}: its generator {} is not in the project", path.string(), gen));
    }
    const std::string actual = sha256_file(path);
    if (actual != e["sha256"].get<std::string>())
      problems.push_back(fmt::format("golden {}: sha256 {} does not match the manifest's {} (edited without review?)",
                                     path.string(), actual.substr(0, 16), e["sha256"].get<std::string>().substr(0, 16)));
  }
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir_)) {
    if (!f.is_regular_file()) continue;
    const std::string rel = std::filesystem::relative(f.path(), dir_).generic_string();
    if (rel == "manifest.json" || f.path().extension() == ".received") continue;
    if (rel.rfind(kGenerators, 0) == 0) continue;
    if (!has(rel)) problems.push_back(fmt::format("golden {}: not in the manifest (no provenance)", f.path().string()));
  }
  return problems;
}

bool GoldenManifest::has(const std::string& relpath) const { return json_["files"].contains(relpath); }

bool GoldenManifest::is_documented(const std::string& relpath) const {
  return has(relpath) && json_["files"][relpath]["kind"] == "documented";
}

const nlohmann::json& GoldenManifest::entry(const std::string& relpath) const { return json_["files"].at(relpath); }

void GoldenManifest::record_accepted(const std::string& relpath, const std::string& provenance) {
  nlohmann::json e = has(relpath) ? json_["files"][relpath] : nlohmann::json::object();
  e["kind"] = "generated";
  e["generator"] = provenance;
  e["sha256"] = sha256_file(dir_ / relpath);
  json_["files"][relpath] = e;
}

void GoldenManifest::save() const {
  const auto tmp = file_.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << json_.dump(2) << '\n';
    if (!out) throw InputError(fmt::format("{}: cannot write", tmp));
  }
  std::filesystem::rename(tmp, file_);
}

}  // namespace vl
