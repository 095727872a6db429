#pragma once
// Shared by test_backends_candidate.cpp and test_backends_candidate_failures.cpp: the candidate
// programs they start (the ones the CLI tests use), a case's isolation (its own TMPDIR, and a
// token in its candidates' environment by which any process of theirs left running is found),
// and the message of an expected error.
#include <boost/test/unit_test.hpp>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backends/candidate_backend.hpp"
#include "scratch_dir.hpp"

namespace vl::verify {

inline const std::string kCandidatePython = "/usr/bin/python3";  // the CLI tests' interpreter (CMakeLists.txt: SYSTEM_PYTHON), with NumPy
inline const std::string kNumpyReference = kCandidatePython + " " VL_SOURCE_DIR "/adapters/numpy_reference.py";
/// verify/candidates/misbehaving.py with its arguments ("crash 1").
inline std::string misbehaving(const std::string& args) {
  return kCandidatePython + " " VL_SOURCE_DIR "/verify/candidates/misbehaving.py " + args;
}

/// For one case: TMPDIR a folder of its own and VL_TEST_TOKEN a value of its own (its candidates
/// inherit both); at the end, no live process holds the token and the folder is empty.
struct IsolatedCandidates {
  const ScratchDir folder{"vl-test-candidate-"};  // removed after the checks below
  const std::filesystem::path& tmp = folder.path;
  std::string token, old_tmp;
  IsolatedCandidates() {
    token = tmp.filename().string();
    if (const char* t = getenv("TMPDIR")) old_tmp = t;
    setenv("TMPDIR", tmp.c_str(), 1);
    setenv("VL_TEST_TOKEN", token.c_str(), 1);
  }
  ~IsolatedCandidates() {
    BOOST_TEST(processes_with_token().empty(), "candidate processes left running");
    BOOST_TEST(std::filesystem::is_empty(tmp), "a temporary folder left behind in " << tmp);
    unsetenv("VL_TEST_TOKEN");
    if (old_tmp.empty()) unsetenv("TMPDIR");
    else setenv("TMPDIR", old_tmp.c_str(), 1);
  }
  IsolatedCandidates(const IsolatedCandidates&) = delete;
  IsolatedCandidates& operator=(const IsolatedCandidates&) = delete;
  /// Live (not zombie) processes whose environment holds VL_TEST_TOKEN=token.
  std::vector<std::string> processes_with_token() const {
    std::vector<std::string> found;
    const std::string nul(1, '\0'), want = nul + "VL_TEST_TOKEN=" + token + nul;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string pid = entry.path().filename();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream env(entry.path() / "environ", std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
      if ((nul + text + nul).find(want) == std::string::npos) continue;
      std::ifstream stat(entry.path() / "stat");
      const std::string s((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const auto close = s.rfind(')');  // "pid (comm) state …"
      if (close != std::string::npos && close + 2 < s.size() && s[close + 2] != 'Z') found.push_back(pid);
    }
    return found;
  }
};

inline std::unique_ptr<backends::CandidateBackend> start_candidate(const std::string& command,
                                                                   std::chrono::milliseconds timeout = std::chrono::milliseconds(60'000)) {
  backends::CandidateOptions o;
  o.command = command;
  o.timeout = timeout;
  return std::make_unique<backends::CandidateBackend>(o);
}

/// The message of the E that `call` throws (empty, and a failed check, if none).
template <class E = backends::CandidateError, class F>
std::string error_of(F call) {
  try {
    call();
  } catch (const E& e) {
    return e.what();
  }
  BOOST_ERROR("no error thrown");
  return "";
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace vl::verify
