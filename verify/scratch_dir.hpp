// A test's scratch folder: a fresh folder under the temporary folder (TMPDIR; mkdtemp, so two
// tests at once never share one), removed with everything in it when the object goes. ctest's
// last test checks that the run left its TMPDIR empty (verify/test_tmpdir.py).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include <boost/test/unit_test.hpp>

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    BOOST_REQUIRE_MESSAGE(mkdtemp(pattern.data()) != nullptr, "cannot make a folder " << pattern);
    path = pattern;
  }
  ~ScratchDir() {
    // A copy made read-only is made writable first, else its files stay; a link is not followed
    // (its target is not ours), and one entry that cannot be changed does not end the walk.
    std::error_code walk, change;
    for (auto it = std::filesystem::recursive_directory_iterator(path, walk); !walk && it != std::filesystem::recursive_directory_iterator(); it.increment(walk))
      if (!it->is_symlink(change))
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add, change);
    std::filesystem::remove_all(path, walk);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};
