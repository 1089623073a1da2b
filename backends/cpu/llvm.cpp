// The one translation unit of the project that includes LLVM headers (LLVM 16; they are slow to compile).
#include "backends/cpu/llvm.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ValueHandle.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "lib/helpers.h"

namespace tg::cpu {

// The LLVM IR renderer writes float constants as python's str() does (llvmir.py lconst), so a float64 constant with
// a short repr comes out as "1e-05" or "1e+100", which LLVM's lexer refuses (it wants a '.': "1.0e-05"): the
// reference's DEV=CPU:LLVM fails on them too. Such literals get the ".0" here; the renderer keeps the reference's text.
std::string fix_float_literals(const std::string& src) {
  std::string out;
  out.reserve(src.size() + 16);
  auto sep = [](char c) { return c == ' ' || c == ',' || c == '(' || c == '[' || c == '-' || c == '+'; };
  auto end = [](char c) { return c == ' ' || c == ',' || c == ')' || c == ']' || c == '\n' || c == '\r'; };
  size_t i = 0, n = src.size();
  while (i < n) {
    char c = src[i];
    if (std::isdigit((unsigned char)c) && i > 0 && sep(src[i - 1]) &&
        (src[i - 1] != '-' && src[i - 1] != '+' ? true : i > 1 && sep(src[i - 2]))) {
      size_t j = i;
      while (j < n && std::isdigit((unsigned char)src[j])) j++;
      if (j < n && (src[j] == 'e' || src[j] == 'E')) {
        size_t k = j + 1;
        if (k < n && (src[k] == '-' || src[k] == '+')) k++;
        size_t d = k;
        while (k < n && std::isdigit((unsigned char)src[k])) k++;
        if (k > d && (k == n || end(src[k]))) {
          out.append(src, i, j - i);
          out += ".0";
          out.append(src, j, k - j);
          i = k;
          continue;
        }
      }
      out.append(src, i, j - i);
      i = j;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

// The LLVM IR renderer (like the reference's CPULLVMRenderer) spells TRUNC as a call of `@llvm.trunc.<type>` with the
// IR type name (float, double, <4 x float>) and no declaration, which LLVM refuses: the reference's DEV=CPU:LLVM fails
// on trunc/floor/ceil/round. The renderer keeps the reference's text; here each such call is renamed to the mangled
// intrinsic (llvm.trunc.f32, llvm.trunc.v4f32) and declared, so these kernels compile.
std::string declare_trunc_intrinsics(const std::string& src) {
  static const std::string key = "@llvm.trunc.";
  if (src.find(key) == std::string::npos) return src;
  auto mangle = [](const std::string& t) -> std::string {
    static const std::pair<const char*, const char*> scalars[] = {
        {"float", "f32"}, {"double", "f64"}, {"half", "f16"}, {"bfloat", "bf16"}};
    for (auto [ir, m] : scalars)
      if (t == ir) return m;
    // <N x T>
    if (t.size() > 2 && t.front() == '<' && t.back() == '>') {
      size_t x = t.find(" x ");
      if (x != std::string::npos) {
        std::string inner = t.substr(x + 3, t.size() - x - 4);
        for (auto [ir, m] : scalars)
          if (inner == ir) return "v" + t.substr(1, x - 1) + m;
      }
    }
    return "";
  };
  std::string out, decls;
  std::vector<std::string> declared;
  size_t pos = 0;
  while (true) {
    size_t at = src.find(key, pos);
    if (at == std::string::npos) break;
    size_t ty_start = at + key.size(), paren = src.find('(', ty_start);
    if (paren == std::string::npos) break;
    std::string ty = src.substr(ty_start, paren - ty_start), m = mangle(ty);
    out += src.substr(pos, ty_start - pos);
    if (m.empty()) {
      out += ty;  // not a type we know: leave it, LLVM will say what is wrong
    } else {
      out += m;
      if (std::find(declared.begin(), declared.end(), m) == declared.end() &&
          src.find("declare " + ty + " @llvm.trunc." + m + "(") == std::string::npos) {
        declared.push_back(m);
        decls += "declare " + ty + " @llvm.trunc." + m + "(" + ty + ")\n";
      }
    }
    pos = paren;
  }
  out += src.substr(pos);
  return decls + out;
}

namespace {

constexpr const char* kEntryPrefix = "__tg_entry_";
constexpr const char* kSigPrefix = "__tg_sig_";

// LLVM reports some errors with report_fatal_error, which ends the process ("LLVM ERROR: Cannot select: ..."). The
// handler turns them into this exception, caught around each compile.
struct LLVMFatalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// CPU_SLP_MAX_VF (0 = LLVM's own limit): the widest vector the SLP vectorizer builds. The default depends on the
// host, read from its CPU features: 8 with AVX-512, unlimited without. With AVX-512, unlimited turns the 4x4 register
// tiles of the hand-coded optimizations (an outer product of two strided rows) into 16-wide zmm FMAs fed by dozens of
// inserts, permutes and gathers per iteration, and at 8 the convolution gradients of the training step run 8-28%
// faster. With AVX2 only, the same tiles become pairs of ymm FMAs, and the cap is what costs: the weight gradient of
// beautiful_mnist's second convolution runs 2x slower at 8 (its 16 lanes stay gathered scalars). Lanes compute the
// same operations either way (results are bit-identical). Read once, at LLVM's setup.
int slp_max_vf() {
  static const int v = [] {
    llvm::StringMap<bool> features;
    bool avx512 = llvm::sys::getHostCPUFeatures(features) && features.lookup("avx512f");
    int64_t x = getenv_int("CPU_SLP_MAX_VF", avx512 ? 8 : 0);
    if (x < 0 || x > 64)
      throw EnvError("environment variable CPU_SLP_MAX_VF=" + std::to_string(x) + " is not in 0..64");
    return (int)x;
  }();
  return v;
}

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    llvm::InitializeNativeTargetDisassembler();
    llvm::install_fatal_error_handler([](void*, const char* reason, bool) { throw LLVMFatalError(reason); });
    if (int vf = slp_max_vf()) {
      auto& opts = llvm::cl::getRegisteredOptions();
      auto it = opts.find("slp-max-vf");
      if (it != opts.end()) it->second->addOccurrence(0, "slp-max-vf", std::to_string(vf));
    }
  });
}

std::string to_string(llvm::Error e) { return llvm::toString(std::move(e)); }

// the host's target machine builder: CPU and features detected at run time, O2 codegen, PIC, small code model (the
// reference: LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelDefault)
llvm::orc::JITTargetMachineBuilder host_jtmb() {
  init_llvm();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw DeviceError("LLVM cannot target this host: " + to_string(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  return std::move(*jtmb);
}

// the first function the source defines, to name the kernel in messages
std::string kernel_name_of(const std::string& src) {
  for (size_t pos = src.find("define "); pos != std::string::npos; pos = src.find("define ", pos + 1)) {
    if (pos != 0 && src[pos - 1] != '\n') continue;
    size_t at = src.find('@', pos), eol = src.find('\n', pos);
    if (at == std::string::npos || at > eol) continue;
    if (src[at + 1] == '"') {
      size_t q = src.find('"', at + 2);
      if (q != std::string::npos && q < eol) return src.substr(at + 2, q - at - 2);
    }
    size_t end = src.find('(', at);
    if (end != std::string::npos && end < eol) return src.substr(at + 1, end - at - 1);
  }
  return "<no function defined>";
}

// collects error diagnostics (the reference's handle_diag); without a handler LLVM exits the process on an error
struct DiagCollector : llvm::DiagnosticHandler {
  std::vector<std::string>* msgs;
  explicit DiagCollector(std::vector<std::string>* m) : msgs(m) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo& di) override {
    if (di.getSeverity() == llvm::DS_Error) {
      std::string s;
      llvm::raw_string_ostream os(s);
      llvm::DiagnosticPrinterRawOStream dp(os);
      di.print(dp);
      msgs->push_back(os.str());
    }
    return true;
  }
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Integer division as the reference defines it (helpers.cdiv / cmod, what its PYTHON device computes): x / 0 = 0,
// x % 0 = x, and INT_MIN / -1 wraps to INT_MIN (remainder 0). LLVM IR's sdiv/udiv/srem/urem by zero, and sdiv/srem of
// INT_MIN by -1, are undefined, and x86 traps on them (SIGFPE). Each such instruction whose divisor is not a constant
// known to be safe divides by a divisor made safe (1 where it is 0, or -1 when signed) and selects the defined result.
// The rendered source stays the reference's; the optimizer folds the guards of constant divisors away.
void define_integer_division(llvm::Function& f) {
  std::vector<llvm::BinaryOperator*> divs;
  for (llvm::BasicBlock& bb : f)
    for (llvm::Instruction& i : bb)
      if (auto* bo = llvm::dyn_cast<llvm::BinaryOperator>(&i)) switch (bo->getOpcode()) {
          case llvm::Instruction::SDiv:
          case llvm::Instruction::UDiv:
          case llvm::Instruction::SRem:
          case llvm::Instruction::URem: divs.push_back(bo); break;
          default: break;
        }
  for (llvm::BinaryOperator* d : divs) {
    auto op = d->getOpcode();
    bool is_signed = op == llvm::Instruction::SDiv || op == llvm::Instruction::SRem;
    bool is_div = op == llvm::Instruction::SDiv || op == llvm::Instruction::UDiv;
    llvm::Value *x = d->getOperand(0), *y = d->getOperand(1);
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(y); c && !c->isZero() && !(is_signed && c->isMinusOne())) continue;
    llvm::Type* ty = y->getType();
    llvm::IRBuilder<> b(d);
    llvm::Constant *zero = llvm::Constant::getNullValue(ty), *one = llvm::ConstantInt::get(ty, 1);
    llvm::Value* is_zero = b.CreateICmpEQ(y, zero);
    llvm::Value* is_m1 = is_signed ? b.CreateICmpEQ(y, llvm::Constant::getAllOnesValue(ty)) : nullptr;
    llvm::Value* bad = is_m1 ? b.CreateOr(is_zero, is_m1) : is_zero;
    llvm::Value* q = b.CreateBinOp(op, x, b.CreateSelect(bad, one, y));  // x / 1 = x, x % 1 = 0
    if (is_div && is_m1) q = b.CreateSelect(is_m1, b.CreateSub(zero, x), q);  // -x, wrapping
    llvm::Value* r = b.CreateSelect(is_zero, is_div ? zero : x, q);
    r->takeName(d);
    d->replaceAllUsesWith(r);
    d->eraseFromParent();
  }
}

// adds __tg_entry_<f>(ptr args) and __tg_sig_<f> for every function the module defines
void add_entries(llvm::Module& mod, const std::string& kname) {
  llvm::LLVMContext& ctx = mod.getContext();
  std::vector<llvm::Function*> kernels;
  for (llvm::Function& f : mod)
    if (!f.isDeclaration() && !f.hasLocalLinkage() && !f.getName().startswith("__tg_")) kernels.push_back(&f);
  if (kernels.empty()) throw CompileError("kernel " + kname + ": the LLVM IR defines no function");
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::PointerType* ptr = llvm::PointerType::get(ctx, 0);
  for (llvm::Function* k : kernels) {
    std::string name = k->getName().str();
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
    auto* entry = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, kEntryPrefix + name, mod);
    entry->addFnAttr(llvm::Attribute::NoUnwind);
    entry->addParamAttr(0, llvm::Attribute::NoAlias);
    entry->addParamAttr(0, llvm::Attribute::ReadOnly);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    std::vector<llvm::Value*> args;
    std::vector<uint64_t> sig{(uint64_t)k->arg_size()};
    for (llvm::Argument& a : k->args()) {
      unsigned i = a.getArgNo();
      llvm::Value* slot = b.CreateConstInBoundsGEP1_64(i64, entry->getArg(0), i);
      llvm::Value* word = b.CreateAlignedLoad(i64, slot, llvm::Align(8));
      llvm::Type* t = a.getType();
      uint64_t kind, align = 0;
      if (t->isPointerTy()) {
        args.push_back(b.CreateIntToPtr(word, t));
        kind = (uint64_t)ParamKind::PTR;
        if (llvm::MaybeAlign al = a.getParamAlign()) align = al->value();
      } else if (t->isIntegerTy() && t->getIntegerBitWidth() <= 64) {
        args.push_back(t->getIntegerBitWidth() == 64 ? word : b.CreateTrunc(word, t));
        kind = (uint64_t)ParamKind::INT;
      } else if (t->isHalfTy() || t->isBFloatTy() || t->isFloatTy() || t->isDoubleTy()) {
        llvm::Type* it = llvm::Type::getIntNTy(ctx, t->getPrimitiveSizeInBits().getFixedValue());
        args.push_back(b.CreateBitCast(it == i64 ? word : b.CreateTrunc(word, it), t));
        kind = (uint64_t)ParamKind::FLOAT;
      } else {
        std::string ts;
        llvm::raw_string_ostream os(ts);
        t->print(os);
        throw CompileError("kernel " + name + ": parameter " + std::to_string(i) + " has type " + os.str() +
                           "; the CPU launcher passes one uint64 per argument (pointers and scalars only)");
      }
      sig.push_back(kind | (align << 8));
    }
    b.CreateCall(k, args);
    b.CreateRetVoid();
    // the kernel is compiled once, as the reference compiles it, and the entry stays a thunk: the renderer's
    // alwaysinline would copy the kernel into the entry and optimize and emit it twice
    k->removeFnAttr(llvm::Attribute::AlwaysInline);
    k->addFnAttr(llvm::Attribute::NoInline);
    auto* aty = llvm::ArrayType::get(i64, sig.size());
    std::vector<llvm::Constant*> words;
    for (uint64_t w : sig) words.push_back(llvm::ConstantInt::get(i64, w));
    new llvm::GlobalVariable(mod, aty, true, llvm::GlobalValue::ExternalLinkage, llvm::ConstantArray::get(aty, words),
                             kSigPrefix + name);
  }
}

// InstCombine narrows 64-bit address math to 32 bits when it cannot overflow (`sext(add nsw i32 %x, 5)` instead of
// `add nsw i64 (sext %x), 5`), and x86 instruction selection cannot fold a sign extension of a sum into an address:
// an unrolled kernel then computes each of its loads' addresses in a register of its own (`lea 5(%r), %e; movslq`),
// and the big ones spill them. After the pipeline each such extension of a sum, product, shift or `or` with a
// constant is widened back (exact: the operation's no-wrap flag says so), so the constants become address
// displacements and `sext %x` is computed once. This cuts instruction selection and register allocation time (the
// training step's kernels: code generation -23%, the whole compile -13%) and does not change what a kernel computes.
void widen_index_extensions(llvm::Function& f) {
  std::vector<llvm::CastInst*> work;
  for (llvm::BasicBlock& bb : f)
    for (llvm::Instruction& i : bb)
      if (auto* c = llvm::dyn_cast<llvm::CastInst>(&i))
        if ((llvm::isa<llvm::SExtInst>(c) || llvm::isa<llvm::ZExtInst>(c)) && c->getType()->isIntegerTy(64))
          work.push_back(c);
  // one extension per (value, signedness), placed right after the value's definition; the handle follows the
  // extension when it is widened in turn (replaceAllUsesWith)
  std::map<std::pair<llvm::Value*, bool>, llvm::WeakTrackingVH> ext_of;
  std::vector<llvm::WeakTrackingVH> maybe_dead;
  auto extend = [&](llvm::Value* v, bool sign, llvm::Type* ty) -> llvm::Value* {
    auto key = std::make_pair(v, sign);
    if (auto it = ext_of.find(key); it != ext_of.end()) return &*it->second;
    llvm::Value* r;
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
      r = llvm::ConstantInt::get(ty, sign ? c->getValue().sext(64) : c->getValue().zext(64));
    } else {
      llvm::Instruction* at;
      if (auto* inst = llvm::dyn_cast<llvm::Instruction>(v)) {
        at = llvm::isa<llvm::PHINode>(inst) ? &*inst->getParent()->getFirstInsertionPt() : inst->getNextNode();
      } else {
        at = &*f.getEntryBlock().getFirstInsertionPt();
      }
      auto* e = llvm::CastInst::Create(sign ? llvm::Instruction::SExt : llvm::Instruction::ZExt, v, ty, "", at);
      work.push_back(e);
      r = e;
    }
    ext_of.emplace(key, r);
    return r;
  };
  while (!work.empty()) {
    llvm::CastInst* c = work.back();
    work.pop_back();
    bool sign = llvm::isa<llvm::SExtInst>(c);
    auto* op = llvm::dyn_cast<llvm::BinaryOperator>(c->getOperand(0));
    if (!op) continue;
    // only with a constant operand: sums become displacements, products and shifts scales
    if (!llvm::isa<llvm::ConstantInt>(op->getOperand(1)) &&
        (op->getOpcode() == llvm::Instruction::Shl || !llvm::isa<llvm::ConstantInt>(op->getOperand(0))))
      continue;
    auto opc = op->getOpcode();
    // an extension distributes over `or` always (each extended bit is an OR of the operands' bits), over add, mul
    // and shl when the operation does not wrap
    if (opc == llvm::Instruction::Add || opc == llvm::Instruction::Mul || opc == llvm::Instruction::Shl) {
      if (sign ? !op->hasNoSignedWrap() : !op->hasNoUnsignedWrap()) continue;
    } else if (opc != llvm::Instruction::Or) {
      continue;
    }
    llvm::Value* a = extend(op->getOperand(0), sign, c->getType());
    llvm::Value* b =
        opc == llvm::Instruction::Shl
            ? llvm::ConstantInt::get(c->getType(), llvm::cast<llvm::ConstantInt>(op->getOperand(1))->getZExtValue())
            : extend(op->getOperand(1), sign, c->getType());
    auto* w = llvm::BinaryOperator::Create(opc, a, b, "", c);
    if (opc != llvm::Instruction::Or) {
      if (sign)
        w->setHasNoSignedWrap(true);
      else
        w->setHasNoUnsignedWrap(true);
    }
    c->replaceAllUsesWith(w);
    c->eraseFromParent();
    maybe_dead.emplace_back(op);
  }
  // the narrow operations nothing uses any more (erased only now: the map's keys must stay valid until here)
  ext_of.clear();
  // (a handle whose instruction an earlier entry erased is null: read it as a pointer, never through operator*,
  // which binds a reference to null; UBSan found it)
  for (llvm::WeakTrackingVH& v : maybe_dead)
    if (auto* i = llvm::dyn_cast_or_null<llvm::Instruction>(static_cast<llvm::Value*>(v)); i && i->use_empty())
      i->eraseFromParent();
}
}  // namespace

// ***** LLVMCompiler *****

// the state of one compile, on the heap: after an LLVM fatal error it is leaked, not destroyed (the error unwinds
// through LLVM frames built without exceptions, which leaves their objects half updated). Members are destroyed in
// reverse order: the pipeline before the module, the module before its context.
struct CompileJob {
  llvm::LLVMContext ctx;
  std::vector<std::string> diags;
  llvm::TargetMachine* tm = nullptr;  // the thread's (thread_tm)
  std::unique_ptr<llvm::Module> mod;
  llvm::PassInstrumentationCallbacks pic;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  std::unique_ptr<llvm::StandardInstrumentations> si;
  llvm::ModulePassManager mpm;
  llvm::SmallVector<char, 0> obj;
  std::unique_ptr<llvm::raw_svector_ostream> obj_os;
  std::unique_ptr<llvm::legacy::PassManager> cg;
};

struct LLVMCompiler::Impl {
  bool optimize, verify_each;
  llvm::orc::JITTargetMachineBuilder jtmb;
  std::string cpu, feats, triple;
  Impl(bool o, bool v) : optimize(o), verify_each(v), jtmb(host_jtmb()) {
    cpu = jtmb.getCPU();
    feats = jtmb.getFeatures().getString();
    triple = jtmb.getTargetTriple().str();
  }

  // the host's target machine, one per thread and reused by its compiles like the reference's one per compiler
  // (creating one per compile cost 0.8 ms, a third of a small kernel's compile); dropped after an LLVM fatal error
  std::unique_ptr<llvm::TargetMachine>& thread_tm_slot() {
    thread_local std::unique_ptr<llvm::TargetMachine> tm;
    return tm;
  }
  llvm::TargetMachine& thread_tm() {
    std::unique_ptr<llvm::TargetMachine>& slot = thread_tm_slot();
    if (!slot) {
      auto tm = jtmb.createTargetMachine();
      if (!tm) throw DeviceError("LLVM cannot create a target machine for this host: " + to_string(tm.takeError()));
      slot = std::move(*tm);
    }
    return *slot;
  }

  // what a compile job ends with: the optimized module only, an object file, or assembly text
  enum class Emit { None, Object, Assembly };

  // parse, verify, add the entries, run the pass pipeline; emit the object (or the assembly) when asked
  void run(CompileJob& job, const std::string& src, const std::string& kname, CompileTiming* timing, Emit emit) {
    // a context per compile and a target machine per thread: compiles may run on several threads at once
    job.tm = &thread_tm();
    auto t0 = std::chrono::steady_clock::now();
    job.ctx.setDiagnosticHandler(std::make_unique<DiagCollector>(&job.diags));
    llvm::SMDiagnostic err;
    job.mod = llvm::parseAssemblyString(declare_trunc_intrinsics(fix_float_literals(src)), err, job.ctx);
    if (!job.mod) {
      std::string caret(err.getColumnNo() > 0 ? (size_t)err.getColumnNo() : 0, ' ');
      throw CompileError("kernel " + kname + ": LLVM IR does not parse: line " + std::to_string(err.getLineNo()) +
                         ", column " + std::to_string(err.getColumnNo() + 1) + ": " + err.getMessage().str() + "\n  " +
                         err.getLineContents().str() + "\n  " + caret + "^");
    }
    llvm::Module& mod = *job.mod;
    {
      std::string s;
      llvm::raw_string_ostream os(s);
      if (llvm::verifyModule(mod, &os))
        throw CompileError("kernel " + kname + ": LLVM IR does not verify: " + os.str());
    }
    mod.setTargetTriple(triple);
    mod.setDataLayout(job.tm->createDataLayout());
    // Kernels realign their stack to what their spill slots need. Without "stackrealign" LLVM keeps the ABI's 16-byte
    // alignment and spills 32-byte vector registers with unaligned moves: on a thread whose stack pointer is 16 mod 32
    // at the call, half of those spills straddle two cache lines and their reloads wait for the stores (AMD Zen does
    // not forward such stores). The training step's largest kernel ran its half on the pool's worker thread in
    // 900 ms instead of 460 ms. Only the frame changes: the arithmetic and its results are the same.
    for (llvm::Function& f : mod)
      if (!f.isDeclaration()) {
        f.addFnAttr("stackrealign");
        define_integer_division(f);
      }
    add_entries(mod, kname);
    if (timing) timing->parse = ms_since(t0);

    t0 = std::chrono::steady_clock::now();
    // LLVMRunPasses(mod, "default<O2>", tm, pbo) with loop unrolling, loop and SLP vectorization on
    llvm::PipelineTuningOptions pto;
    pto.LoopUnrolling = true;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    llvm::PassBuilder pb(job.tm, pto, std::nullopt, &job.pic);
    pb.registerModuleAnalyses(job.mam);
    pb.registerCGSCCAnalyses(job.cgam);
    pb.registerFunctionAnalyses(job.fam);
    pb.registerLoopAnalyses(job.lam);
    pb.crossRegisterProxies(job.lam, job.fam, job.cgam, job.mam);
    job.si = std::make_unique<llvm::StandardInstrumentations>(job.ctx, false, verify_each);
    job.si->registerCallbacks(job.pic, &job.fam);
    if (verify_each) job.mpm.addPass(llvm::VerifierPass());
    if (auto e = pb.parsePassPipeline(job.mpm, optimize ? "default<O2>" : "default<O0>"))
      throw CompileError("kernel " + kname + ": failed to run passes: " + to_string(std::move(e)));
    job.mpm.run(mod, job.mam);
    if (optimize)
      for (llvm::Function& f : mod)
        if (!f.isDeclaration()) widen_index_extensions(f);
    if (timing) timing->opt = ms_since(t0);
    if (!job.diags.empty()) throw CompileError("kernel " + kname + ": llvm diagnostic: " + job.diags.front());
    if (emit == Emit::None) return;

    if (DEBUG >= 7) {
      std::string s;
      llvm::raw_string_ostream os(s);
      mod.print(os, nullptr);
      std::printf("%s\n", os.str().c_str());
    }
    t0 = std::chrono::steady_clock::now();
    // LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile)
    job.obj_os = std::make_unique<llvm::raw_svector_ostream>(job.obj);
    job.cg = std::make_unique<llvm::legacy::PassManager>();
    // assembly with the printer's comments (spills, reloads, loop nests); the target machine is this thread's
    llvm::MCTargetOptions& mc = job.tm->Options.MCOptions;
    const bool was_verbose = mc.AsmVerbose;
    mc.AsmVerbose = emit == Emit::Assembly;
    if (job.tm->addPassesToEmitFile(*job.cg, *job.obj_os, nullptr,
                                    emit == Emit::Assembly ? llvm::CGFT_AssemblyFile : llvm::CGFT_ObjectFile)) {
      mc.AsmVerbose = was_verbose;
      throw CompileError("kernel " + kname + ": this target cannot emit an object file");
    }
    job.cg->run(mod);
    mc.AsmVerbose = was_verbose;
    if (timing) timing->codegen = ms_since(t0);
    if (!job.diags.empty()) throw CompileError("kernel " + kname + ": llvm diagnostic: " + job.diags.front());
  }

  // runs a job; an LLVM fatal error (e.g. "Cannot select" in instruction selection) becomes a CompileError
  std::unique_ptr<CompileJob> run_safely(const std::string& src, CompileTiming* timing, Emit emit) {
    const std::string kname = kernel_name_of(src);
    auto job = std::make_unique<CompileJob>();
    try {
      run(*job, src, kname, timing, emit);
    } catch (const LLVMFatalError& e) {
      (void)job.release();               // leaked on purpose, see CompileJob
      (void)thread_tm_slot().release();  // and so is the target machine it used
      throw CompileError("kernel " + kname + ": LLVM fatal error: " + e.what());
    }
    return job;
  }
};

LLVMCompiler::LLVMCompiler(bool optimize, bool verify_each)
    : Compiler(""), impl_(std::make_unique<Impl>(optimize, verify_each)) {
  // the disk cache key: bump kPipeline when compile() changes what it makes of the same IR
  static constexpr const char* kPipeline = "p4";
  cachekey = "compile_llvm" + std::to_string(LLVM_VERSION_MAJOR) + kPipeline + "_" + impl_->cpu + "_" + impl_->feats +
             (optimize ? "_opt" : "") + (slp_max_vf() ? "_vf" + std::to_string(slp_max_vf()) : "");
}
LLVMCompiler::~LLVMCompiler() = default;
const std::string& LLVMCompiler::cpu_name() const { return impl_->cpu; }
const std::string& LLVMCompiler::features() const { return impl_->feats; }

std::vector<uint8_t> LLVMCompiler::compile(const std::string& src) { return compile(src, nullptr); }

std::vector<uint8_t> LLVMCompiler::compile(const std::string& src, CompileTiming* timing) {
  std::unique_ptr<CompileJob> job = impl_->run_safely(src, timing, Impl::Emit::Object);
  return std::vector<uint8_t>(job->obj.begin(), job->obj.end());
}

std::string LLVMCompiler::optimized_ir(const std::string& src) {
  std::unique_ptr<CompileJob> job = impl_->run_safely(src, nullptr, Impl::Emit::None);
  std::string s;
  llvm::raw_string_ostream os(s);
  job->mod->print(os, nullptr);
  return os.str();
}

std::string LLVMCompiler::assembly(const std::string& src) {
  std::unique_ptr<CompileJob> job = impl_->run_safely(src, nullptr, Impl::Emit::Assembly);
  return std::string(job->obj.begin(), job->obj.end());
}

// ***** the machine code of an object, for the trace *****

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

// one decoded instruction of a text section
struct DisInst {
  uint64_t addr = 0, size = 0;
  std::string mnemonic, operands;  // as the instruction printer writes them (AT&T syntax, like objdump)
  bool branch = false, call = false, decoded = true;
  std::optional<uint64_t> target;  // a direct branch's or call's target address
};

// a loop: the span from a backward jump's target to the jump (the last one jumping there)
struct Loop {
  uint64_t head = 0, latch = 0;
  bool innermost = true;
  std::string label;
};

}  // namespace

// The disassembly of an object this compiler made, as llvm-objdump -d -r prints it and the reference's VIZ shows
// (objdump of what ran), in AT&T syntax, with what objdump leaves to the reader made explicit: a label for every
// jump target (.L1, .L2, ...), each loop (a backward jump) marked at its head and at its jump, the innermost ones
// named as such, a gutter of '|' per loop an instruction is in, and the symbol a relocation names (a libm call, a
// constant pool) after the instruction that uses it.
std::optional<MachineCode> LLVMCompiler::machine_code(std::span<const uint8_t> lib) const {
  init_llvm();
  llvm::StringRef bytes(reinterpret_cast<const char*>(lib.data()), lib.size());
  // the ELF reader wants its headers aligned: an object inside another file (PoCL's binary) is copied first
  std::unique_ptr<llvm::MemoryBuffer> copy;
  if (reinterpret_cast<uintptr_t>(lib.data()) % 8 != 0) {
    copy = llvm::MemoryBuffer::getMemBufferCopy(bytes, "kernel");
    bytes = copy->getBuffer();
  }
  auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, "kernel"));
  if (!obj)
    return MachineCode{"no machine code: the library is not an object file (" + to_string(obj.takeError()) + ")", ""};
  const std::string& triple_s = impl_->triple;
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple_s, err);
  if (!target) return MachineCode{"no machine code: LLVM has no disassembler for " + triple_s + " (" + err + ")", ""};
  llvm::Triple triple(triple_s);
  std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(triple_s));
  llvm::MCTargetOptions mcopts;
  std::unique_ptr<llvm::MCAsmInfo> mai(mri ? target->createMCAsmInfo(*mri, triple_s, mcopts) : nullptr);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple_s, impl_->cpu, impl_->feats));
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  if (!mri || !mai || !sti || !mii) return MachineCode{"no machine code: LLVM cannot describe " + triple_s, ""};
  llvm::MCContext mctx(triple, mai.get(), mri.get(), sti.get());
  std::unique_ptr<llvm::MCDisassembler> dis(target->createMCDisassembler(*sti, mctx));
  std::unique_ptr<llvm::MCInstrAnalysis> mia(target->createMCInstrAnalysis(mii.get()));
  std::unique_ptr<llvm::MCInstPrinter> printer(target->createMCInstPrinter(triple, 0 /* AT&T */, *mai, *mii, *mri));
  if (!dis || !printer) return MachineCode{"no machine code: LLVM has no disassembler for " + triple_s, ""};
  printer->setPrintImmHex(true);
  printer->setPrintBranchImmAsAddress(true);

  std::string out, body;
  size_t code_bytes = 0, n_funcs = 0;
  std::vector<std::string> loop_notes;
  int label_no = 0;
  for (const llvm::object::SectionRef& sec : (*obj)->sections()) {
    if (!sec.isText() || sec.getSize() == 0) continue;
    auto contents = sec.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    llvm::ArrayRef<uint8_t> code(reinterpret_cast<const uint8_t*>(contents->data()), contents->size());
    const uint64_t base = sec.getAddress();
    code_bytes += code.size();
    // functions by address
    std::map<uint64_t, std::string> funcs;
    for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
      auto sec_it = sym.getSection();
      auto type = sym.getType();
      auto name = sym.getName();
      auto addr = sym.getAddress();
      if (!sec_it || !type || !name || !addr) {
        if (!sec_it) llvm::consumeError(sec_it.takeError());
        if (!type) llvm::consumeError(type.takeError());
        if (!name) llvm::consumeError(name.takeError());
        if (!addr) llvm::consumeError(addr.takeError());
        continue;
      }
      if (*sec_it == (*obj)->section_end() || **sec_it != sec || *type != llvm::object::SymbolRef::ST_Function)
        continue;
      funcs.emplace(*addr, name->str());
    }
    n_funcs += funcs.size();
    // what each relocation in the section names: offset -> symbol (or section), addend, PC-relative
    struct Reloc {
      std::string name;
      int64_t addend = 0;
      bool pcrel = false;
      std::optional<llvm::object::SectionRef> sec;  // the section the symbol is in, and where in it
      uint64_t sym_off = 0;
    };
    std::map<uint64_t, Reloc> relocs;
    const bool elf = llvm::object::ELFObjectFileBase::classof(obj->get());
    for (const llvm::object::SectionRef& rs : (*obj)->sections()) {
      auto relocated = rs.getRelocatedSection();
      if (!relocated) {
        llvm::consumeError(relocated.takeError());
        continue;
      }
      if (*relocated == (*obj)->section_end() || **relocated != sec) continue;
      for (const llvm::object::RelocationRef& r : rs.relocations()) {
        Reloc rel;
        llvm::object::symbol_iterator sym = r.getSymbol();
        if (sym != (*obj)->symbol_end()) {
          auto name = sym->getName();
          auto ssec = sym->getSection();
          if (!ssec) {
            llvm::consumeError(ssec.takeError());
          } else if (*ssec != (*obj)->section_end()) {
            rel.sec = **ssec;
            auto v = sym->getValue();
            if (v)
              rel.sym_off = *v;
            else
              llvm::consumeError(v.takeError());
          }
          if (name && !name->empty()) {
            rel.name = name->str();
          } else {
            if (!name) llvm::consumeError(name.takeError());
            if (rel.sec) {
              auto sname = rel.sec->getName();
              if (sname)
                rel.name = sname->str();
              else
                llvm::consumeError(sname.takeError());
            }
          }
        }
        if (rel.name.empty()) continue;
        if (elf) {
          auto addend = llvm::object::ELFRelocationRef(r).getAddend();
          if (addend)
            rel.addend = *addend;
          else
            llvm::consumeError(addend.takeError());
        }
        llvm::SmallString<32> type;
        r.getTypeName(type);
        rel.pcrel = type.str().contains("PC") || type.str().contains("PLT");
        relocs[r.getOffset()] = std::move(rel);
      }
    }
    // decode everything once
    std::vector<DisInst> insts;
    for (uint64_t off = 0; off < code.size();) {
      DisInst di;
      di.addr = base + off;
      llvm::MCInst inst;
      uint64_t size = 0;
      if (dis->getInstruction(inst, size, code.slice(off), di.addr, llvm::nulls()) == llvm::MCDisassembler::Success &&
          size > 0) {
        std::string text;
        llvm::raw_string_ostream os(text);
        printer->printInst(&inst, di.addr, "", *sti, os);
        os.flush();
        size_t b = text.find_first_not_of(" \t");
        text = b == std::string::npos ? "" : text.substr(b);
        size_t tab = text.find('\t');
        di.mnemonic = text.substr(0, tab);
        if (tab != std::string::npos) di.operands = text.substr(tab + 1);
        for (char& c : di.operands)
          if (c == '\t') c = ' ';
        di.size = size;
        if (mia) {
          di.branch = mia->isBranch(inst);
          di.call = mia->isCall(inst);
          uint64_t t = 0;
          if ((di.branch || di.call) && mia->evaluateBranch(inst, di.addr, size, t)) di.target = t;
        }
        // a relocated jump or call goes where its relocation says (its immediate is a placeholder)
        auto r = relocs.lower_bound(off);
        if (r != relocs.end() && r->first < off + size) di.target.reset();
      } else {
        di.size = std::max<uint64_t>(1, size);
        if (off + di.size > code.size()) di.size = code.size() - off;
        di.decoded = false;
        di.mnemonic = ".byte";
        for (uint64_t k = 0; k < di.size; k++) di.operands += (k ? ", " : "") + hex(code[off + k]);
      }
      off += di.size;
      insts.push_back(std::move(di));
    }
    // the function each address lies in: [start, next start)
    auto func_of = [&](uint64_t a) -> uint64_t {
      auto it = funcs.upper_bound(a);
      return it == funcs.begin() ? UINT64_MAX : std::prev(it)->first;
    };
    // labels for jump targets inside a function; loops from backward jumps
    std::map<uint64_t, std::string> labels;
    std::map<uint64_t, Loop> loops;  // by head
    for (const DisInst& di : insts)
      if (di.branch && !di.call && di.target && !funcs.count(*di.target) && *di.target >= base &&
          *di.target < base + code.size()) {
        labels.emplace(*di.target, "");
        if (*di.target <= di.addr && func_of(*di.target) == func_of(di.addr)) {
          Loop& l = loops[*di.target];
          l.head = *di.target;
          l.latch = std::max(l.latch, di.addr);
        }
      }
    for (auto& [a, name] : labels) name = ".L" + std::to_string(++label_no);
    for (auto& [h, l] : loops) {
      l.label = labels[h];
      for (const auto& [h2, l2] : loops)
        if (h2 != h && h2 >= l.head && l2.latch <= l.latch) l.innermost = false;
      loop_notes.push_back(l.label + (l.innermost ? " innermost" : "") + " (" + hex(l.head) + "-" + hex(l.latch) + ")");
    }
    auto depth_of = [&](uint64_t a) {
      int d = 0;
      for (const auto& [h, l] : loops) d += a >= l.head && a <= l.latch;
      return d;
    };
    int max_depth = 0;
    for (const auto& [h, l] : loops) max_depth = std::max(max_depth, depth_of(h));
    // print
    char buf[64];
    for (const DisInst& di : insts) {
      if (auto f = funcs.find(di.addr); f != funcs.end()) body += (body.empty() ? "" : "\n") + f->second + ":\n";
      if (auto lb = labels.find(di.addr); lb != labels.end()) {
        std::string line = lb->second + ":";
        if (auto l = loops.find(di.addr); l != loops.end())
          line += std::string(line.size() < 40 ? 40 - line.size() : 1, ' ') + "; " +
                  (l->second.innermost ? "innermost loop" : "loop") + ", back from " + hex(l->second.latch);
        body += line + "\n";
      }
      std::snprintf(buf, sizeof buf, "%8llx:  ", (unsigned long long)di.addr);
      std::string line = buf;
      if (max_depth) {
        int d = depth_of(di.addr);
        line += std::string((size_t)d, '|') + std::string((size_t)(max_depth - d) + 1, ' ');
      }
      std::string ops = di.operands;
      std::string note;
      // a relocated field: what it names (a PC-relative field counts from the instruction's end); a jump or call
      // through one goes to that symbol, and a float or double constant it loads is shown
      for (uint64_t k = di.addr - base; k < di.addr - base + di.size; k++) {
        auto r = relocs.find(k);
        if (r == relocs.end()) continue;
        int64_t at = r->second.addend + (r->second.pcrel ? (int64_t)(di.addr - base + di.size - k) : 0);
        std::string what = r->second.name + (at == 0 ? "" : (at > 0 ? "+" : "-") + hex((uint64_t)(at > 0 ? at : -at)));
        if ((di.branch || di.call) && at == 0) {
          ops = "<" + r->second.name + ">";
          continue;
        }
        const std::string& m = di.mnemonic;
        bool f32 =
            m.size() > 2 && (m.ends_with("ss") || m.ends_with("ps")) && !m.starts_with("vcvt") && !m.starts_with("cvt");
        bool f64 =
            m.size() > 2 && (m.ends_with("sd") || m.ends_with("pd")) && !m.starts_with("vcvt") && !m.starts_with("cvt");
        if ((f32 || f64) && r->second.sec && !r->second.sec->isText() && !r->second.sec->isBSS()) {
          uint64_t off = r->second.sym_off + (uint64_t)at;
          auto data = r->second.sec->getContents();
          if (!data) {
            llvm::consumeError(data.takeError());
          } else if (off + (f32 ? 4 : 8) <= data->size()) {
            char v[48];
            if (f32) {
              float x;
              std::memcpy(&x, data->data() + off, 4);
              std::snprintf(v, sizeof v, " = %.9g", (double)x);
            } else {
              double x;
              std::memcpy(&x, data->data() + off, 8);
              std::snprintf(v, sizeof v, " = %.17g", x);
            }
            what += v;
          }
        }
        // a RIP-relative operand names its symbol where objdump leaves "(%rip)"; the note keeps the value
        if (size_t rip = ops.find("(%rip)");
            rip != std::string::npos && (rip == 0 || ops[rip - 1] == ' ' || ops[rip - 1] == ',')) {
          size_t eq = what.find(" = ");
          ops.insert(rip, what.substr(0, eq));
          what = eq == std::string::npos ? "" : what.substr(eq + 3);
        }
        if (!what.empty()) note += (note.empty() ? "" : ", ") + what;
      }
      if (di.target) {
        if (auto f = funcs.find(*di.target); f != funcs.end()) {
          ops = "<" + f->second + ">";
        } else if (auto lb = labels.find(*di.target); lb != labels.end()) {
          ops = lb->second;
          if (*di.target <= di.addr) {
            auto l = loops.find(*di.target);
            note =
                std::string("<- loop ") + lb->second + (l != loops.end() && l->second.innermost ? " (innermost)" : "");
          }
        }
      }
      std::string ins = di.mnemonic + std::string(di.mnemonic.size() < 11 ? 11 - di.mnemonic.size() : 1, ' ') + ops;
      line += ins;
      if (!note.empty()) line += std::string(ins.size() < 48 ? 48 - ins.size() : 2, ' ') + "# " + note;
      while (!line.empty() && line.back() == ' ') line.pop_back();
      body += line + "\n";
    }
  }
  if (code_bytes == 0) return MachineCode{"no machine code: the object has no code", ""};
  std::string arch = triple.getArchName().str();
  if (arch == "x86_64") arch = "x86-64";
  out = "; " + arch + " machine code for " + impl_->cpu + ": " + std::to_string(code_bytes) + " bytes in " +
        std::to_string(n_funcs) + " function" + (n_funcs == 1 ? "" : "s") + ", disassembled by LLVM " +
        std::to_string(LLVM_VERSION_MAJOR) + " from the object that was loaded\n";
  out += "; loops (a backward jump; '|' per loop an instruction is in): ";
  if (loop_notes.empty()) out += "none";
  for (size_t i = 0; i < loop_notes.size(); i++) out += (i ? ", " : "") + loop_notes[i];
  out += "\n\n" + body;
  return MachineCode{arch + " machine code (" + impl_->cpu + "): LLVM's disassembly of the ELF object that ran",
                     std::move(out)};
}

// ***** LLVMJit *****

struct LLVMJit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::atomic<uint64_t> next_id{0};
  // what ORC reported while materializing (e.g. "Symbols not found: [ sinhf ]"), for the next failing lookup
  std::mutex err_mu;
  std::vector<std::string> reported;
  std::string take_reported() {
    std::lock_guard<std::mutex> lk(err_mu);
    std::string r;
    for (const auto& e : reported) r += "; " + e;
    reported.clear();
    return r;
  }
};

LLVMJit::LLVMJit() : impl_(std::make_shared<Impl>()) {
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(host_jtmb()).create();
  if (!jit) throw DeviceError("cannot create the LLVM JIT: " + to_string(jit.takeError()));
  impl_->jit = std::move(*jit);
  // link errors are returned by the lookups; keep ORC from printing them
  impl_->jit->getExecutionSession().setErrorReporter([impl = impl_.get()](llvm::Error e) {
    std::string msg = to_string(std::move(e));
    std::lock_guard<std::mutex> lk(impl->err_mu);
    if (impl->reported.size() < 16) impl->reported.push_back(std::move(msg));
  });
  // external symbols (libm, libgcc's runtime helpers) come from the process, like the reference's link_libs
  auto gen =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(impl_->jit->getDataLayout().getGlobalPrefix());
  if (!gen) throw DeviceError("cannot search the process for symbols: " + to_string(gen.takeError()));
  impl_->jit->getMainJITDylib().addGenerator(std::move(*gen));
}
LLVMJit::~LLVMJit() = default;

std::shared_ptr<LLVMJit> LLVMJit::create() { return std::shared_ptr<LLVMJit>(new LLVMJit()); }

struct LLVMJit::Library::Impl {
  std::shared_ptr<LLVMJit::Impl> jit;
  llvm::orc::JITDylib* jd = nullptr;
  std::vector<std::string> kernels;
};

std::unique_ptr<LLVMJit::Library> LLVMJit::load(std::span<const uint8_t> object) {
  llvm::StringRef bytes(reinterpret_cast<const char*>(object.data()), object.size());
  // the kernels it has: the entries in its symbol table
  std::vector<std::string> kernels;
  {
    auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, "kernel"));
    if (!obj) throw DeviceError("not an object file: " + to_string(obj.takeError()));
    for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
      auto name = sym.getName();
      if (!name) {
        llvm::consumeError(name.takeError());
        continue;
      }
      if (name->startswith(kEntryPrefix)) kernels.push_back(name->drop_front(std::strlen(kEntryPrefix)).str());
    }
  }
  llvm::orc::ExecutionSession& es = impl_->jit->getExecutionSession();
  auto jd = es.createJITDylib("tg_kernel_" + std::to_string(impl_->next_id++));
  if (!jd) throw DeviceError("cannot create a JITDylib: " + to_string(jd.takeError()));
  jd->addToLinkOrder(impl_->jit->getMainJITDylib());
  auto lib = std::unique_ptr<Library>(new Library());
  lib->impl_ = std::make_unique<Library::Impl>();
  lib->impl_->jit = impl_;
  lib->impl_->jd = &*jd;
  lib->impl_->kernels = std::move(kernels);
  if (auto e = impl_->jit->addObjectFile(*jd, llvm::MemoryBuffer::getMemBufferCopy(bytes, "kernel")))
    throw DeviceError("cannot load the kernel object: " + to_string(std::move(e)));  // ~Library removes the JITDylib
  return lib;
}

LLVMJit::Library::~Library() {
  if (impl_ && impl_->jd) llvm::consumeError(impl_->jit->jit->getExecutionSession().removeJITDylib(*impl_->jd));
}

std::vector<std::string> LLVMJit::Library::kernels() const { return impl_->kernels; }

LLVMJit::Library::Entry LLVMJit::Library::entry(const std::string& name, std::vector<ParamSig>* sig) const {
  bool known = false;
  std::string have;
  for (const auto& k : impl_->kernels) {
    known = known || k == name;
    have += (have.empty() ? "" : ", ") + k;
  }
  if (!known)
    throw DeviceError("no function " + name + " in the compiled kernel (it has: " + (have.empty() ? "none" : have) +
                      ")");
  llvm::orc::LLJIT& jit = *impl_->jit->jit;
  auto e = jit.lookup(*impl_->jd, kEntryPrefix + name);
  if (!e) {
    std::string msg = to_string(e.takeError());
    throw DeviceError("kernel " + name + ": cannot link: " + msg + impl_->jit->take_reported());
  }
  auto s = jit.lookup(*impl_->jd, kSigPrefix + name);
  if (!s) {
    std::string msg = to_string(s.takeError());
    throw DeviceError("kernel " + name + ": cannot link: " + msg + impl_->jit->take_reported());
  }
  const uint64_t* words = s->toPtr<const uint64_t*>();
  if (sig) {
    sig->clear();
    for (uint64_t i = 0; i < words[0]; i++)
      sig->push_back(ParamSig{(ParamKind)(words[i + 1] & 0xff), (uint32_t)(words[i + 1] >> 8)});
  }
  return e->toPtr<Entry>();
}

}  // namespace tg::cpu
