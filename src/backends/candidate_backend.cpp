// Backend `candidate` (candidate_backend.hpp): each operation is one vl-candidate/1 request.
#include "backends/candidate_backend.hpp"

#include <cmath>
#include <cstdlib>
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
template <class T>
constexpr const char* dtype_name() {
  return std::is_same_v<T, float> ? "float32" : std::is_same_v<T, bool> ? "bool" : "float64";
}
std::string shape_text(const std::vector<std::size_t>& s) { return fmt::format("({})", fmt::join(s, ", ")); }
}  // namespace

// One request: its folder r<id>/ under ours, the inputs written there, the outputs read back
// with their shape and dtype checked. The folder goes when the request does.
class CandidateBackend::Request {
 public:
  Request(const CandidateBackend& b, std::string op, Op which) : b_(b), op_(std::move(op)), which_(which) {
    candidate_signals::throw_if_interrupted();  // SIGINT/SIGTERM: no new request, unwind
    std::lock_guard lock(b_.mutex_);
    id_ = b_.next_id_++;
    dir_ = b_.dir_ / fmt::format("r{}", id_);
    std::filesystem::create_directories(dir_);
  }
  ~Request() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  template <class T>
  void input(const std::string& name, const xt::xarray<T>& a) {
    const auto path = dir_ / (name + ".npy");
    npy::save(path, a);
    inputs_[name] = path.string();
  }
  void output(const std::string& name) { outputs_[name] = (dir_ / (name + "_out.npy")).string(); }
  json attrs = json::object();

  void send() {
    if (!b_.supports_request(op_)) refuse(fmt::format("its hello lists no '{}'", op_));
    std::lock_guard lock(b_.mutex_);
    if (!b_.dead_.empty()) throw CandidateError(fmt::format("{}: not sent: {}", where(), b_.dead_));
    const json request = {{"id", id_}, {"op", op_}, {"inputs", inputs_}, {"attrs", attrs}, {"outputs", outputs_}};
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
      throw CandidateError(fmt::format("{}: the candidate's error: {}{}", where(), error, b_.stderr_tail()));
    }
  }

  /// The output `name`, which must be a .npy file of T's dtype and this shape.
  template <class T, std::size_t N>
  xt::xtensor<T, N> result(const std::string& name, const std::vector<std::size_t>& shape) {
    const std::filesystem::path path = outputs_.at(name).get<std::string>();
    if (!std::filesystem::exists(path)) throw CandidateError(fmt::format("{}: output '{}' was not written ({})", where(), name, path.string()));
    npy::Info info;
    try {
      info = npy::read_info(path);
    } catch (const InputError& e) {
      throw CandidateError(fmt::format("{}: output '{}' is not a readable .npy: {}", where(), name, e.what()));
    }
    if (info.dtype != dtype_name<T>())
      throw CandidateError(fmt::format("{}: output '{}' is {}; the inputs are {}", where(), name, info.dtype, dtype_name<T>()));
    if (info.shape != shape)
      throw CandidateError(fmt::format("{}: output '{}' has shape {}; the operation defines {}", where(), name, shape_text(info.shape),
                                       shape_text(shape)));
    return npy::load_exact<T>(path);
  }

  [[noreturn]] void refuse(const std::string& why) const {
    throw CandidateRefused(which_, fmt::format("candidate '{}' has no {}: {}", b_.name_, op_, why));
  }
  /// The hello listed this optional attr ("attrs": [...]): the candidate implements it.
  bool knows(const std::string& attr) const { return b_.attrs_.count(attr) > 0; }

 private:
  std::string where() const { return fmt::format("candidate '{}', request {} ({})", b_.name_, id_, op_); }
  const CandidateBackend& b_;
  std::string op_;
  Op which_;
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
// The vl-candidate/1 request that carries an operation; nullptr where the protocol has none.
const char* protocol_request(Op op) {
  switch (op) {
    case Op::attention:
    case Op::attention_weights: return "attention";
    case Op::attention_backward: return "attention_backward";
    case Op::multi_head_attention: return "mha";
    case Op::positional_encoding: return "positional_encoding";
    case Op::linear_parallel:
    case Op::linear_recurrent:
    case Op::linear_chunked: return "linear_attention";
    default: return nullptr;  // score stages, storage rounding, the linear family, the Transformer layers
  }
}
}  // namespace

bool CandidateBackend::supports(Op op) const {
  const char* request = protocol_request(op);
  return request != nullptr && supports_request(request);
}

std::string CandidateBackend::lacking(Op op, const std::string& why) const {
  if (protocol_request(op) == nullptr)
    return fmt::format("vl-candidate/1 has no request for {}; candidate '{}' was not asked{}", to_string(op), name_,
                       why.empty() ? "" : " (" + why + ")");
  return Backend::lacking(op, why);
}

namespace {
// The attention attrs and mask of vl-candidate/1 from our options; what it cannot carry is refused.
template <class T>
void attention_request(CandidateBackend::Request& r, const AttentionOptions<T>& o) {
  if (o.return_scores) throw CandidateRefused(Op::attention_scores, "vl-candidate/1 has no score stages (qk_matmul_output)");
  if (o.round) throw CandidateRefused(Op::attention_storage_rounding, "vl-candidate/1 has no storage rounding");
  // Optional attrs (docs/candidates.md): sent only to a candidate whose hello lists them, so that
  // one that does not know them is not applicable rather than judged on what it ignored.
  if (o.kv_lengths) {
    if (!r.knows("kv_lengths")) r.refuse("its hello lists no attr 'kv_lengths' (vl-candidate/1's per-batch key lengths, nonpad_kv_seqlen)");
    r.attrs["kv_lengths"] = *o.kv_lengths;
  }
  if (o.left_window >= 0 || o.right_window >= 0) {
    if (!r.knows("window")) r.refuse("its hello lists no attr 'window' (vl-candidate/1's sliding window, left_window/right_window)");
    r.attrs["left_window"] = o.left_window;
    r.attrs["right_window"] = o.right_window;
  }
  if (o.first_query) {
    if (!r.knows("first_query")) r.refuse("its hello lists no attr 'first_query' (vl-candidate/1's query position, a KV cache's past length)");
    r.attrs["first_query"] = *o.first_query;
  }
  r.attrs["causal"] = o.causal;
  r.attrs["alignment"] = o.alignment == CausalAlignment::top_left ? "top_left" : "bottom_right";
  r.attrs["scale"] = o.scale ? json(double(*o.scale)) : json(nullptr);
  r.attrs["softcap"] = double(o.softcap);
  if (o.allowed && o.bias) {  // one mask: the additive one, −∞ where the bool one forbids
    const xt::xarray<T> m = xt::where(*o.allowed, *o.bias, -std::numeric_limits<T>::infinity());
    r.input("mask", m);
  } else if (o.allowed) {
    r.input("mask", *o.allowed);
  } else if (o.bias) {
    r.input("mask", *o.bias);
  }
}
}  // namespace

template <class T>
AttentionResult<T, 4> CandidateBackend::attention_impl(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                                       const AttentionOptions<T>& o) const {
  Request r(*this, "attention", o.return_weights ? Op::attention_weights : Op::attention);
  attention_request(r, o);
  r.input("q", xt::xarray<T>(q));
  r.input("k", xt::xarray<T>(k));
  r.input("v", xt::xarray<T>(v));
  r.output("y");
  if (o.return_weights) r.output("weights");
  r.send();
  AttentionResult<T, 4> out;
  out.output = r.result<T, 4>("y", {q.shape(0), q.shape(1), q.shape(2), v.shape(3)});
  if (o.return_weights) out.weights = r.result<T, 4>("weights", {q.shape(0), q.shape(1), q.shape(2), k.shape(2)});
  return out;
}

template <class T>
AttentionGradients<T, 4> CandidateBackend::backward_impl(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                                         const Tensor4<T>& d_out, const AttentionOptions<T>& o) const {
  Request r(*this, "attention_backward", Op::attention_backward);
  attention_request(r, o);
  r.input("q", xt::xarray<T>(q));
  r.input("k", xt::xarray<T>(k));
  r.input("v", xt::xarray<T>(v));
  r.input("d_out", xt::xarray<T>(d_out));
  for (const char* name : {"dq", "dk", "dv"}) r.output(name);
  r.send();
  AttentionGradients<T, 4> g;
  g.dq = r.result<T, 4>("dq", {q.shape().begin(), q.shape().end()});
  g.dk = r.result<T, 4>("dk", {k.shape().begin(), k.shape().end()});
  g.dv = r.result<T, 4>("dv", {v.shape().begin(), v.shape().end()});
  return g;
}

AttentionResult<double, 4> CandidateBackend::attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                       const AttentionOptions<double>& o) const {
  return attention_impl(q, k, v, o);
}
AttentionResult<float, 4> CandidateBackend::attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                      const AttentionOptions<float>& o) const {
  return attention_impl(q, k, v, o);
}
AttentionGradients<double, 4> CandidateBackend::attention_backward(const Tensor4<double>& q, const Tensor4<double>& k,
                                                                   const Tensor4<double>& v, const Tensor4<double>& d_out,
                                                                   const AttentionOptions<double>& o) const {
  return backward_impl(q, k, v, d_out, o);
}
AttentionGradients<float, 4> CandidateBackend::attention_backward(const Tensor4<float>& q, const Tensor4<float>& k,
                                                                  const Tensor4<float>& v, const Tensor4<float>& d_out,
                                                                  const AttentionOptions<float>& o) const {
  return backward_impl(q, k, v, d_out, o);
}

MhaResult<double, 3> CandidateBackend::multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                                            const xt::xtensor<double, 3>& value, const MhaParameters<double>& p,
                                                            std::size_t heads, const MhaOptions<double>& o) const {
  Request r(*this, "mha", Op::multi_head_attention);
  const std::size_t B = query.shape(0), sq = query.shape(1), sk = key.shape(1), d = query.shape(2);
  if (o.causal && o.alignment == CausalAlignment::bottom_right && sq != sk)
    r.refuse("vl-candidate/1's mha has a top-left causal mask only (torch's is_causal)");
  r.input("query", xt::xarray<double>(query));
  r.input("key", xt::xarray<double>(key));
  r.input("value", xt::xarray<double>(value));
  r.input("in_proj_weight", xt::xarray<double>(p.in_proj_weight));
  r.input("in_proj_bias", xt::xarray<double>(p.in_proj_bias));
  r.input("out_proj_weight", xt::xarray<double>(p.out_proj_weight));
  r.input("out_proj_bias", xt::xarray<double>(p.out_proj_bias));
  if (o.attn_mask && o.attn_bias) {  // torch's float attn_mask, −∞ where the bool one blocks
    const xt::xarray<double> m = xt::where(*o.attn_mask, -std::numeric_limits<double>::infinity(), *o.attn_bias);
    r.input("attn_mask", m);
  } else if (o.attn_mask) {
    r.input("attn_mask", *o.attn_mask);
  } else if (o.attn_bias) {
    r.input("attn_mask", *o.attn_bias);
  }
  if (o.key_padding_mask) r.input("key_padding_mask", *o.key_padding_mask);
  r.attrs["num_heads"] = heads;
  r.attrs["causal"] = o.causal;
  r.output("y");
  if (o.need_weights) r.output("weights");
  r.send();
  MhaResult<double, 3> out;
  out.output = r.result<double, 3>("y", {B, sq, d});
  if (o.need_weights) out.weights = r.result<double, 4>("weights", {B, heads, sq, sk});
  return out;
}

Matrix CandidateBackend::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  Request r(*this, "positional_encoding", Op::positional_encoding);
  r.attrs["length"] = positions.size();
  r.attrs["dim"] = d;
  r.attrs["base"] = 10000;
  r.attrs["positions"] = positions;  // an addition to the fields: rows at these positions (default 0 … length − 1)
  r.output("pe");
  r.send();
  return r.result<double, 2>("pe", {positions.size(), d});
}

Matrix CandidateBackend::linear(const char* form, Op op, const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  Request r(*this, "linear_attention", op);
  r.input("phi_q", xt::xarray<double>(pq));
  r.input("phi_k", xt::xarray<double>(pk));
  r.input("v", xt::xarray<double>(v));
  r.attrs["form"] = form;
  r.attrs["chunk"] = chunk;
  r.output("y");
  r.send();
  return r.result<double, 2>("y", {pq.shape(0), v.shape(1)});
}
Matrix CandidateBackend::linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return linear("parallel", Op::linear_parallel, pq, pk, v, 0);
}
Matrix CandidateBackend::linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return linear("recurrent", Op::linear_recurrent, pq, pk, v, 0);
}
Matrix CandidateBackend::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  return linear("chunked", Op::linear_chunked, pq, pk, v, chunk);
}

}  // namespace vl::backends
