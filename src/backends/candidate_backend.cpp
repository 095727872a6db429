// Backend `candidate` (candidate_backend.hpp): each operation is one vl-candidate/1 request.
#include "backends/candidate_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xoperation.hpp>

#include "backends/candidate_signals.hpp"
#include "core/errors.hpp"
#include "numeric/npy.hpp"

namespace vl::backends {

using nlohmann::json;

namespace {
// The dtype an array of T travels as: a float32 array in the request's wire precision.
template <class T>
std::string dtype_name(Precision wire) {
  return std::is_same_v<T, float> ? to_string(wire) : std::is_same_v<T, bool> ? "bool" : "float64";
}
// The .npy dtype that carries it (bfloat16: its bits, as uint16).
template <class T>
std::string npy_dtype(Precision wire) {
  const std::string d = dtype_name<T>(wire);
  return d == "bfloat16" ? "uint16" : d;
}
std::string shape_text(const std::vector<std::size_t>& s) { return fmt::format("({})", fmt::join(s, ", ")); }
}  // namespace

// One request: its folder r<id>/ under ours, the inputs written there, the outputs read back
// with their shape and dtype checked. The folder goes when the request does.
class CandidateBackend::Request {
 public:
  Request(const CandidateBackend& b, std::string op, Need which, Precision wire)
      : b_(b), op_(std::move(op)), which_(which), wire_(wire) {
    candidate_signals::throw_if_interrupted();  // SIGINT/SIGTERM: no new request, unwind
    std::lock_guard lock(b_.mutex_);
    id_ = b_.next_id_++;
    dir_ = b_.dir_ / fmt::format("r{}", id_);
    // New, under ours: the inputs are written into it in place. One that is there already (the
    // candidate made it) or cannot be made (ours removed) is the candidate's doing.
    std::error_code ec;
    if (!std::filesystem::create_directory(dir_, ec) || ec)
      throw CandidateError(fmt::format("{}: cannot make its folder {}: {}", where(), dir_.string(),
                                       ec ? ec.message() : "it is there already (not made by the suite)"));
  }
  // The files it named go one by one, then the folder; one the candidate left more in goes whole
  // (remove_all's listing of the folder, the rest of the time not needed).
  ~Request() {
    std::error_code ec;
    for (const json* files : {&inputs_, &outputs_})
      for (const auto& [name, path] : files->items()) std::filesystem::remove(path.get_ref<const std::string&>(), ec);
    if (::rmdir(dir_.c_str()) != 0) std::filesystem::remove_all(dir_, ec);
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  template <class T>
  void input(const std::string& name, const xt::xarray<T>& a) {
    const auto path = dir_ / (name + ".npy");
    // Written in place (no temporary, no rename): the folder is this request's, new, and the
    // candidate reads nothing of it before the request is sent.
    constexpr auto how = npy::Write::new_file;
    if constexpr (std::is_same_v<T, float>) {  // in the wire precision: exact for what InPrecision rounded, else rounded here once
      if (wire_ == Precision::float16) npy::save_float16(path, xt::xarray<double>(xt::cast<double>(a)), how);
      else if (wire_ == Precision::bfloat16) npy::save_bfloat16_bits(path, xt::xarray<double>(xt::cast<double>(a)), how);
      else npy::save(path, a, how);
    } else {
      npy::save(path, a, how);
    }
    inputs_[name] = path.string();
    if constexpr (!std::is_same_v<T, bool>) precision<T>();  // the arrays say it too
  }
  /// The precision of the request ("dtype" attr), for a candidate whose hello listed "dtypes":
  /// a request without a floating input (the positional table) says it so alone.
  template <class T>
  void precision() {
    if (b_.lists_dtypes_) attrs["dtype"] = dtype_name<T>(wire_);
  }
  void output(const std::string& name) { outputs_[name] = (dir_ / (name + "_out.npy")).string(); }
  json attrs = json::object();

  void send() {
    if (!b_.supports_request(op_)) refuse(fmt::format("its hello lists no vl-candidate/1 request '{}'", op_));
    std::lock_guard lock(b_.mutex_);
    if (!b_.dead_.empty()) throw CandidateError(fmt::format("{}: not sent: {}", where(), b_.dead_));
    const json request = {{"id", id_}, {"op", op_}, {"inputs", inputs_}, {"attrs", attrs}, {"outputs", outputs_}};
    ++b_.sent_;
    const auto reply = b_.process_->exchange(request.dump(), b_.options_.timeout);
    candidate_signals::throw_if_interrupted();  // the watcher killed it: not a crash of its own
    if (reply.outcome == CandidateProcess::Outcome::timed_out) {
      b_.dead_ = fmt::format("the candidate timed out at request {} ({}) and was killed; nothing more is sent", id_, op_);
      throw CandidateError(fmt::format("{}: the candidate {}{}", where(), reply.status, b_.stderr_tail()));
    }
    if (reply.outcome == CandidateProcess::Outcome::exited) {
      const std::string tail = b_.stderr_tail();
      if (++b_.crashes_ >= 2) {
        b_.dead_ = fmt::format("the candidate crashed twice (last at request {}, {}); nothing more is sent", id_, op_);
        throw CandidateError(fmt::format("{}: the candidate {}, for the second time: not restarted{}", where(), reply.status, tail));
      }
      std::string restarted = "restarted it";
      try {
        b_.start();
      } catch (const std::exception& e) {
        b_.dead_ = fmt::format("it could not be restarted after it crashed at request {}: {}", id_, e.what());
        restarted = "could not restart it";
      }
      throw CandidateError(fmt::format("{}: the candidate {} ({}){}", where(), reply.status, restarted, tail));
    }
    json r;
    try {
      r = json::parse(reply.line);
    } catch (const json::exception&) {
    }
    if (!r.is_object())
      throw CandidateError(fmt::format("{}: the reply is not a JSON object: '{}'", where(), reply.line.substr(0, 200)));
    if (!r.contains("id") || r["id"] != id_)
      throw CandidateError(fmt::format("{}: the reply answers id {}, not {}: '{}'", where(), r.contains("id") ? r["id"].dump() : "(none)",
                                       id_, reply.line.substr(0, 200)));
    if (!r.contains("ok") || !r["ok"].is_boolean())
      throw CandidateError(fmt::format("{}: the reply has no boolean \"ok\": '{}'", where(), reply.line.substr(0, 200)));
    if (!r["ok"].get<bool>()) {
      const std::string error = r.contains("error") && r["error"].is_string() ? r["error"].get<std::string>() : r.dump();
      if (error.rfind("unsupported", 0) == 0)
        throw CandidateRefused(which_, fmt::format("candidate '{}' answered request {} ({}): {}", b_.name_, id_, op_, error));
      if (error.rfind("invalid:", 0) == 0)
        throw CandidateInvalidInput(fmt::format("{}: the candidate refused the input: {}", where(), error));
      throw CandidateError(fmt::format("{}: the candidate's error: {}{}", where(), error, b_.stderr_tail()));
    }
  }

  /// The output `name`, which must be a .npy file of T's dtype and rank N (its shape is the
  /// operation's to check: check_shapes).
  /// The file is opened once: its dtype and rank are checked from the header (`check`), before
  /// its data is read.
  template <class T, std::size_t N>
  xt::xtensor<T, N> result(const std::string& name) {
    const std::filesystem::path path = outputs_.at(name).get<std::string>();
    const npy::InfoCheck check = [&](const npy::Info& info) {
      if (info.dtype != npy_dtype<T>(wire_))
        throw CandidateError(fmt::format("{}: output '{}' is {}; the inputs are {}{}", where(), name, info.dtype, npy_dtype<T>(wire_),
                                         wire_ == Precision::bfloat16 ? " (bfloat16's bits)" : ""));
      if (info.shape.size() != N)
        throw CandidateError(fmt::format("{}: output '{}' has shape {}; the operation defines a {}-dimensional array", where(), name,
                                         shape_text(info.shape), N));
    };
    try {
      if (std::is_same_v<T, float> && (wire_ == Precision::float16 || wire_ == Precision::bfloat16)) {
        npy::Array a = npy::load(path, check);  // float16 values, or bfloat16's bits: each exact as a float
        if (wire_ == Precision::bfloat16)
          for (double& x : a.values) x = bfloat16_value(static_cast<std::uint16_t>(x));
        return npy::to_xarray<T>(a);
      }
      return npy::load_exact<T>(path, check);
    } catch (const InputError& e) {  // the file's own faults (check's CandidateError is no InputError: it passes)
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) throw CandidateError(fmt::format("{}: output '{}' was not written ({})", where(), name, path.string()));
      throw CandidateError(fmt::format("{}: output '{}' is not a readable .npy: {}", where(), name, e.what()));
    }
  }

  /// Throws CandidateError at the first output whose shape is not the one the operation defines.
  void check_shapes(const std::vector<ops::ResultShape>& shapes) const {
    for (const ops::ResultShape& s : shapes)
      if (s.got != s.want)
        throw CandidateError(fmt::format("{}: output '{}' has shape {}; the operation defines {}", where(), s.output, shape_text(s.got),
                                         shape_text(s.want)));
  }

  /// The candidate cannot be asked this call (a setting the protocol or its hello lacks).
  [[noreturn]] void refuse(const std::string& why) const {
    throw CandidateRefused(which_, fmt::format("candidate '{}' has no {}: {}", b_.name_, op_, why));
  }
  /// The protocol cannot carry this option of the operation.
  [[noreturn]] void refuse(Option option, const std::string& why) const { throw CandidateRefused(Need(which_.op, option), why); }
  /// Throws CandidateError unless the output `name` is `want` bit for bit (`what` says what it must be).
  template <class T, std::size_t N>
  void require_exact(const xt::xtensor<T, N>& got, const xt::xtensor<T, N>& want, const std::string& name, const std::string& what) const {
    if (got.shape() != want.shape())
      throw CandidateError(fmt::format("{}: output '{}' has shape {}; it must be {}, of shape {}", where(), name,
                                       shape_text(std::vector<std::size_t>(got.shape().begin(), got.shape().end())), what,
                                       shape_text(std::vector<std::size_t>(want.shape().begin(), want.shape().end()))));
    for (std::size_t i = 0; i < got.size(); ++i)
      if (std::memcmp(&got.flat(i), &want.flat(i), sizeof(T)) != 0)  // bit for bit: −0 is not +0, a NaN keeps its payload
        throw CandidateError(fmt::format("{}: output '{}' is not {}: element {} is {} where {} was sent", where(), name, what, i,
                                         double(got.flat(i)), double(want.flat(i))));
  }
  /// The hello listed this optional attr ("attrs": [...]): the candidate implements it.
  bool knows(const std::string& attr) const { return b_.attrs_.count(attr) > 0; }

 private:
  std::string where() const { return fmt::format("candidate '{}', request {} ({})", b_.name_, id_, op_); }
  const CandidateBackend& b_;
  std::string op_;
  Need which_;
  Precision wire_;
  int id_ = 0;
  std::filesystem::path dir_;
  json inputs_ = json::object(), outputs_ = json::object();
};

CandidateBackend::CandidateBackend(CandidateOptions options) : options_(std::move(options)) {
  std::string pattern = (std::filesystem::temp_directory_path() / "vl-candidate-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw CandidateError(fmt::format("cannot make a temporary folder {}", pattern));
  dir_ = pattern;
  candidate_signals::add_dir(dir_);
  try {
    start();
  } catch (...) {
    process_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    candidate_signals::remove_dir(dir_);
    throw;
  }
}

CandidateBackend::~CandidateBackend() {
  process_.reset();  // stops it and its process group
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  candidate_signals::remove_dir(dir_);
}

void CandidateBackend::start() const {
  candidate_signals::throw_if_interrupted();
  process_.reset();
  process_ = std::make_unique<CandidateProcess>(options_.command, dir_ / "stderr.log");
  const json hello = {{"id", 0}, {"op", "hello"}, {"protocol", "vl-candidate/1"}};
  const auto reply = process_->exchange(hello.dump(), options_.timeout);
  candidate_signals::throw_if_interrupted();  // the watcher killed it during the hello
  const std::string who = fmt::format("candidate '{}'", options_.command);
  if (reply.outcome != CandidateProcess::Outcome::reply)
    throw CandidateError(fmt::format("{}: no reply to the hello: it {}{}", who, reply.status, stderr_tail()));
  json r;
  try {
    r = json::parse(reply.line);
  } catch (const json::exception&) {
  }
  if (!r.is_object() || r.value("id", json()) != 0 || r.value("ok", json()) != true || !r.contains("ops") || !r["ops"].is_array())
    throw CandidateError(fmt::format("{}: the hello's reply is not {{\"id\": 0, \"ok\": true, \"name\": ..., \"ops\": [...]}}: '{}'{}", who,
                                     reply.line.substr(0, 200), stderr_tail()));
  auto& self = const_cast<CandidateBackend&>(*this);  // the hello is part of construction (and of a restart: the same answer)
  if (r.contains("name") && r["name"].is_string()) self.name_ = r["name"].get<std::string>();
  self.ops_.clear();
  for (const auto& op : r["ops"])
    if (op.is_string()) self.ops_.insert(op.get<std::string>());
  self.attrs_.clear();  // the optional attrs it implements; one it does not list is never sent
  if (r.contains("attrs") && r["attrs"].is_array())
    for (const auto& a : r["attrs"])
      if (a.is_string()) self.attrs_.insert(a.get<std::string>());
  // The precisions it computes in: absent = float64 only (every candidate before "dtypes" keeps its verdicts).
  self.dtypes_ = {Precision::float64};
  self.lists_dtypes_ = r.contains("dtypes");
  if (self.lists_dtypes_) {
    if (!r["dtypes"].is_array())
      throw CandidateError(fmt::format("{}: the hello's \"dtypes\" is not a list of precisions: '{}'", who, r["dtypes"].dump()));
    self.dtypes_.clear();
    for (const auto& d : r["dtypes"]) {
      const auto p = d.is_string() ? precision_named(d.get<std::string>()) : std::nullopt;
      if (!p)
        throw CandidateError(fmt::format("{}: the hello's \"dtypes\" lists {}, not one of float64, float32, bfloat16, float16", who,
                                         d.dump()));
      if (std::find(self.dtypes_.begin(), self.dtypes_.end(), *p) == self.dtypes_.end()) self.dtypes_.push_back(*p);
    }
  }
}

std::string CandidateBackend::stderr_tail() const {
  std::ifstream in(dir_ / "stderr.log", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return "";
  if (text.size() > 1200) text = "…" + text.substr(text.size() - 1200);
  return "; its stderr ends: " + text;
}

std::string CandidateBackend::summary() const {
  return fmt::format("an external candidate over vl-candidate/1: `{}`, operations {}", options_.command, fmt::join(ops_, ", "));
}

bool CandidateBackend::supports_request(const std::string& op) const { return ops_.count(op) > 0; }

namespace {
// The vl-candidate/1 request that carries an operation (its op header's `request`); nullptr where
// the protocol has none.
const char* protocol_request(Op op) {
  switch (op) {
#define VL_OP_REQUEST(OP, NAME) \
  case Op::NAME: return OP::request;
    VL_OPERATIONS(VL_OP_REQUEST, VL_NO_SIGNATURE)
#undef VL_OP_REQUEST
  }
  return nullptr;
}
}  // namespace

bool CandidateBackend::supports(Need need) const {
  const char* request = protocol_request(need.op);
  if (request == nullptr || !supports_request(request)) return false;
  // vl-candidate/1 carries the weights, and the score stages to a candidate that lists them; no other option
  return need.option == Option::none || need.option == Option::weights ||
         (need.option == Option::score_stages && need.op == Op::attention && attrs_.count("qk_matmul_output") > 0);
}

std::string CandidateBackend::lacking(Need need, const std::string& why) const {
  if (protocol_request(need.op) == nullptr)
    return fmt::format("vl-candidate/1 has no request for {}; candidate '{}' was not asked{}", to_string(need), name_,
                       why.empty() ? "" : " (" + why + ")");
  return Backend::lacking(need, why);
}

// Every operation: one request, encoded and decoded by its op header; an operation the protocol
// does not carry is lacked.
template <class OP, class R, class... A>
R CandidateBackend::exchange(Op op, Precision wire, A&... args) const {
  if constexpr (OP::request == nullptr) {
    lacks(op);
  } else {
    Option option = Option::none;
    if constexpr (requires { OP::option_used(args...); }) option = OP::option_used(args...);
    Request r(*this, OP::request, Need(op, option), wire);
    OP::encode(r, args...);
    r.send();
    R out = OP::decode(r, args...);
    r.check_shapes(OP::result_shapes(out, args...));
    return out;
  }
}

#define VL_DEFINE_REQUEST(OP, R, NAME, PARAMETERS, ARGUMENTS) \
  R CandidateBackend::NAME PARAMETERS const { return exchange<OP, R>(Op::NAME, Precision::float32, VL_UNPACK ARGUMENTS); }
VL_OPERATIONS(VL_NO_OP, VL_DEFINE_REQUEST)
#undef VL_DEFINE_REQUEST

// The candidate in bfloat16 or float16: every operation a request whose float32 arrays travel in
// p (their numbers are p's already: InPrecision rounded them) and come back in p.
class CandidateStoredIn : public Decorator {
 public:
  CandidateStoredIn(Precision p, std::shared_ptr<const Backend> self, const CandidateBackend& candidate)
      : Decorator(std::move(self), ""), candidate_(candidate), p_(p) {}
  std::string name() const override { return candidate_.name(); }
#define VL_DEFINE_STORED_REQUEST(OP, R, NAME, PARAMETERS, ARGUMENTS) \
  R NAME PARAMETERS const override { return candidate_.exchange<OP, R>(Op::NAME, p_, VL_UNPACK ARGUMENTS); }
  VL_OPERATIONS(VL_NO_OP, VL_DEFINE_STORED_REQUEST)
#undef VL_DEFINE_STORED_REQUEST

 private:
  const CandidateBackend& candidate_;  // the base, which the Decorator holds
  Precision p_;
};

std::shared_ptr<const Backend> CandidateBackend::stored_in(Precision p, std::shared_ptr<const Backend> self) const {
  return std::make_shared<CandidateStoredIn>(p, std::move(self), *this);
}

}  // namespace vl::backends
