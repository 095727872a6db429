#pragma once
// Backend `candidate`: anyone's implementation, run as a separate program that speaks
// vl-candidate/1 (docs/candidates.md): one JSON object per line on its stdin/stdout, arrays as
// .npy files in a temporary folder we own. `lessons audit --candidate 'CMD ARGS'` judges it
// with every claim about the computation.
//
// Each operation's header (ops/*.hpp) names its request (`request`; none for the decoder's step
// over its cache and the shift) and writes its encoding and decoding: what travels, in which attrs.
//
// What can go wrong, and what the audit then says:
//   the candidate replies "unsupported: ..."  → CandidateRefused (an Unsupported): not applicable
//   an option vl-candidate/1 cannot carry     → CandidateRefused: not applicable
//   (storage rounding), or an optional attr the hello did not list
//   (kv_lengths, window, first_query or past_kv, qk_matmul_output, positions, ...)
//   the candidate replies "invalid: ..."    → CandidateInvalidInput (a std::invalid_argument): a
//                                             check that requires the input refused counts it
//                                             (encoder-decoder.residual-keeps-width); elsewhere ERROR
//   any other error, garbage, a wrong id, a wrong output shape or dtype → CandidateError: ERROR
//   it crashes                                → ERROR; restarted once; after a second crash or a
//   it hangs past the timeout                   timeout nothing more is sent: every later call is an ERROR
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "backends/candidate_process.hpp"

namespace vl::backends {

/// The candidate said it lacks an operation or an option ("unsupported: ..."), or the protocol
/// cannot carry the option: the claim is not applicable, even though the candidate has the
/// operation itself.
using CandidateRefused = UnsupportedOption;

/// The candidate refused the input as invalid ("invalid: ..."), as torch raises on a layer whose
/// sub-layer returns another width than the residual's: what our kernels throw as
/// std::invalid_argument, so a check that requires the refusal counts it and any other reports it
/// as an ERROR.
class CandidateInvalidInput : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct CandidateOptions {
  std::string command;                         // a shell command line: "python3 adapters/numpy_reference.py"
  std::chrono::milliseconds timeout{60'000};   // per request (the hello included)
};

class CandidateBackend : public Backend {
 public:
  /// Starts the command and shakes hands; throws CandidateError if it does not answer the hello.
  explicit CandidateBackend(CandidateOptions options);
  ~CandidateBackend() override;  // stops the candidate, removes the temporary folder

  std::string name() const override { return name_; }
  std::string summary() const override;
  bool supports(Need need) const override;
  /// The precisions its hello listed ("dtypes": [...]); float64 when it lists none.
  std::vector<Precision> precisions() const override { return dtypes_; }
  /// In bfloat16 or float16: the same candidate, its float32 operations sent and answered in p
  /// (float16 as NumPy's '<f2', bfloat16 as the uint16 bits; the "dtype" attr names p).
  std::shared_ptr<const Backend> stored_in(Precision p, std::shared_ptr<const Backend> self) const override;
  std::string lacking(Need need, const std::string& why) const override;

  VL_OPERATIONS(VL_NO_OP, VL_DECLARE_OVERRIDE)  // every operation (ops/all.hpp): those the protocol carries are requests

  /// Requests sent so far (the hello aside; one refused before it was sent, for an operation or
  /// option the protocol or the hello lacks, is not counted), for the report.
  int requests() const { return sent_; }

  /// One request in flight: its input files written, its reply checked (candidate_backend.cpp).
  class Request;

 private:
  friend class Request;
  friend class CandidateStoredIn;
  void start() const;                      // (re)start the process and shake hands
  bool supports_request(const std::string& op) const;  // the hello listed this request op
  std::string stderr_tail() const;         // the end of the candidate's log, for error messages
  /// One operation's request, encoded and decoded by its op header (OP::encode, OP::decode).
  /// Floating arrays go as T's dtype, a float32 one as `wire` (float32, bfloat16 or float16).
  template <class OP, class R, class... A>
  R exchange(Op op, Precision wire, A&... args) const;

  CandidateOptions options_;
  std::filesystem::path dir_;              // our temporary folder: requests' .npy files, the log
  std::string name_ = "candidate";
  std::set<std::string> ops_;              // what the hello listed
  std::set<std::string> attrs_;            // the optional attrs it listed (docs/candidates.md: kv_lengths, window, ...)
  std::vector<Precision> dtypes_ = {Precision::float64};  // the precisions its hello listed ("dtypes"; absent: float64)
  bool lists_dtypes_ = false;              // its hello had "dtypes": requests then say theirs ("dtype" attr)
  mutable std::mutex mutex_;
  mutable std::unique_ptr<CandidateProcess> process_;
  mutable int next_id_ = 1;
  mutable int sent_ = 0;                   // requests written to the candidate
  mutable int crashes_ = 0;
  mutable std::string dead_;               // why nothing more is sent (empty while it may be used)
};

}  // namespace vl::backends
