// What ipu-opt needs from MLIR's C++ pass infrastructure that the MLIR C API does not expose:
// looking up a registered pass (its display name and the op it is restricted to), MLIR's own IR
// printing instrumentation with per-pass filters, its timing manager (the Parser / Output rows,
// list, tree and JSON reports) and crash reproducers. Everything here is a thin extern "C"
// wrapper over MLIR's public C++ API, so ipu-opt behaves exactly as mlir-opt where both run the
// same instrumentation.

#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Debug/CLOptionsSetup.h"
#include "mlir/Debug/Counter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace mlir;

namespace {

void emit(MlirStringCallback callback, void *data, llvm::StringRef text) {
  callback(mlirStringRefCreate(text.data(), text.size()), data);
}

std::set<std::string> splitNames(MlirStringRef list) {
  std::set<std::string> names;
  llvm::SmallVector<llvm::StringRef> parts;
  unwrap(list).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts)
    names.insert(part.trim().str());
  return names;
}

} // namespace

extern "C" {

/// Parses a file as mlir-opt does (parseSourceFileForTool): text or bytecode, wrapped in an
/// implicit module unless `implicitModule` is false (then it must hold one top-level op), and
/// verified unless `verify` is false. Returns a null op when parsing failed (diagnostics were
/// emitted on the context).
MlirOperation ipuMlirParseSourceFile(MlirContext context, MlirStringRef path, bool verify,
                                     bool implicitModule) {
  MLIRContext *ctx = unwrap(context);
  auto buffer = llvm::MemoryBuffer::getFile(unwrap(path), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true);
  if (!buffer) {
    emitError(UnknownLoc::get(ctx)) << "cannot open input file '" << unwrap(path)
                                    << "': " << buffer.getError().message();
    return MlirOperation{nullptr};
  }
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  ParserConfig config(ctx, verify);
  OwningOpRef<Operation *> op = parseSourceFileForTool(sourceMgr, config, implicitModule);
  return wrap(op.release());
}

/// Looks `argument` up in MLIR's pass registry. Returns 0 when nothing is registered under it,
/// 1 for a pass (then calls `callback` twice: the pass's display name, then the op it is
/// restricted to, empty when it runs on any op), 2 for a registered pipeline (no callbacks).
int ipuMlirLookupPass(MlirStringRef argument, MlirStringCallback callback, void *data) {
  llvm::StringRef name = unwrap(argument);
  if (const PassInfo *info = PassInfo::lookup(name)) {
    OpPassManager manager(OpPassManager::Nesting::Implicit);
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    if (failed(info->addToPipeline(manager, "", [&](const llvm::Twine &message) {
          errorStream << message;
          return failure();
        })))
      return 0;
    for (Pass &pass : manager.getPasses()) {
      emit(callback, data, pass.getName());
      emit(callback, data, pass.getOpName().value_or(""));
      return 1;
    }
    return 0;
  }
  if (PassPipelineInfo::lookup(name))
    return 2;
  return 0;
}

/// Prints the passes of a pipeline element (`canonicalize{max-iterations=3}`) as MLIR prints
/// them, every option with its value. Returns false, with MLIR's message through `callback`, when
/// the text is not a valid element.
bool ipuMlirPrintPipelineElement(MlirStringRef text, MlirStringCallback callback, void *data) {
  OpPassManager manager(OpPassManager::Nesting::Implicit);
  std::string output;
  llvm::raw_string_ostream stream(output);
  if (failed(parsePassPipeline(unwrap(text), manager, stream))) {
    emit(callback, data, output);
    return false;
  }
  bool first = true;
  for (Pass &pass : manager.getPasses()) {
    if (!first)
      stream << ",";
    first = false;
    pass.printAsTextualPipeline(stream);
  }
  emit(callback, data, output);
  return true;
}

/// Parses an anchored pipeline (`builtin.module(...)`) with MLIR's own parser, for its verdict
/// and its error text (written through `callback`).
bool ipuMlirParseAnchoredPipeline(MlirStringRef text, MlirStringCallback callback, void *data) {
  std::string output;
  llvm::raw_string_ostream stream(output);
  bool ok = succeeded(parsePassPipeline(unwrap(text), stream));
  emit(callback, data, output);
  return ok;
}

/// MLIR's IR printing instrumentation as mlir-opt configures it: before/after every pass, or
/// only passes whose argument is in a comma-separated list; to stderr or a file tree.
void ipuMlirEnableIRPrinting(MlirPassManager passManager, MlirStringRef before,
                             MlirStringRef after, bool beforeAll, bool afterAll,
                             bool moduleScope, bool afterOnlyOnChange,
                             bool afterOnlyOnFailure, MlirOpPrintingFlags flags,
                             MlirStringRef treeDir) {
  using Filter = std::function<bool(Pass *, Operation *)>;
  auto filter = [](bool all, std::set<std::string> names) -> Filter {
    if (all)
      return [](Pass *, Operation *) { return true; };
    if (names.empty())
      return [](Pass *, Operation *) { return false; };
    return [names = std::move(names)](Pass *pass, Operation *) {
      return names.count(pass->getArgument().str()) != 0;
    };
  };
  Filter shouldPrintBefore = filter(beforeAll, splitNames(before));
  Filter shouldPrintAfter = filter(afterAll || afterOnlyOnFailure, splitNames(after));
  PassManager *manager = unwrap(passManager);
  OpPrintingFlags printing = *unwrap(flags);
  llvm::StringRef tree = unwrap(treeDir);
  if (!tree.empty()) {
    manager->enableIRPrintingToFileTree(shouldPrintBefore, shouldPrintAfter, moduleScope,
                                        afterOnlyOnChange, afterOnlyOnFailure, tree, printing);
    return;
  }
  manager->enableIRPrinting(shouldPrintBefore, shouldPrintAfter, moduleScope, afterOnlyOnChange,
                            afterOnlyOnFailure, llvm::errs(), printing);
}

/// The namespaces of every dialect the context can load or has loaded (registered ones and
/// dialects loaded at run time, such as IRDL's), sorted, one callback each.
void ipuMlirContextDialects(MlirContext context, MlirStringCallback callback, void *data) {
  MLIRContext *ctx = unwrap(context);
  std::set<std::string> names;
  for (llvm::StringRef name : ctx->getAvailableDialects())
    names.insert(name.str());
  for (Dialect *dialect : ctx->getLoadedDialects())
    names.insert(dialect->getNamespace().str());
  for (const std::string &name : names)
    emit(callback, data, name);
}

/// Registers MLIR's own command-line options (the printer's flags, the context's, debug counters,
/// action logging) in LLVM's option registry, as mlir-opt has them, so that options the driver
/// forwards set the same defaults everywhere MLIR reads them (every OpPrintingFlags, the IR
/// printer, diagnostics). Idempotent.
void ipuMlirRegisterCommandLineOptions() {
  static bool registered = false;
  if (registered)
    return;
  registered = true;
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  tracing::DebugCounter::registerCLOptions();
  tracing::DebugConfig::registerCLOptions();
}

/// Whether LLVM's option registry has an option `name`: 0 no, 1 yes (value optional or none),
/// 2 yes and it requires a value.
int ipuMlirCommandLineOption(MlirStringRef name) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto found = options.find(unwrap(name));
  if (found == options.end())
    return 0;
  return found->second->getValueExpectedFlag() == llvm::cl::ValueRequired ? 2 : 1;
}

/// Parses forwarded options with LLVM's parser; false (and its message) when it refuses them.
bool ipuMlirParseCommandLine(int count, const char *const *arguments, MlirStringCallback callback,
                             void *data) {
  std::string errors;
  llvm::raw_string_ostream stream(errors);
  bool ok = llvm::cl::ParseCommandLineOptions(count, arguments, "", &stream);
  emit(callback, data, errors);
  return ok;
}

/// Installs MLIR's action logging and profiling (--log-actions-to, --log-mlir-actions-filter,
/// --profile-actions-to) on a context, as mlir-opt does; the handle uninstalls when freed.
void *ipuMlirInstallDebugHandler(MlirContext context) {
  return new tracing::InstallDebugHandler(*unwrap(context),
                                          tracing::DebugConfig::createFromCLOptions());
}

void ipuMlirRemoveDebugHandler(void *handler) {
  delete static_cast<tracing::InstallDebugHandler *>(handler);
}

/// An error with a note at the same location (the C API emits errors without notes).
void ipuMlirEmitErrorWithNote(MlirLocation location, MlirStringRef message, MlirStringRef note) {
  InFlightDiagnostic diagnostic = emitError(unwrap(location)) << unwrap(message);
  diagnostic.attachNote() << unwrap(note);
}

/// MLIR's own listing of every registered pass and pipeline (mlir-opt --list-passes), on stdout.
void ipuMlirPrintRegisteredPasses() {
  printRegisteredPasses();
  llvm::outs().flush();
}

/// The LLVM release the binary links (`22.1.8`).
void ipuMlirLlvmVersion(MlirStringCallback callback, void *data) {
  emit(callback, data, LLVM_VERSION_STRING);
}

/// Printing flags the C API cannot set.
void ipuMlirPrintingFlagsExtra(MlirOpPrintingFlags flags, bool valueUsers, bool uniqueIds,
                               int64_t hexLimit) {
  OpPrintingFlags *printing = unwrap(flags);
  if (valueUsers)
    printing->printValueUsers();
  if (uniqueIds)
    printing->printUniqueSSAIDs();
  if (hexLimit >= 0)
    printing->printLargeElementsAttrWithHex(hexLimit);
}

/// Writes a reproducer (the input IR and the pipeline) when a pass fails or crashes.
void ipuMlirEnableCrashReproducer(MlirPassManager passManager, MlirStringRef path, bool local) {
  unwrap(passManager)->enableCrashReproducerGeneration(unwrap(path), local);
}

/// A timing session: MLIR's default timing manager with its root scope and the scopes the
/// driver has open (Parser, Output, ...). The report goes to stderr when the session ends.
struct IpuMlirTiming {
  DefaultTimingManager manager;
  TimingScope root;
  std::vector<TimingScope> open;
};

IpuMlirTiming *ipuMlirTimingCreate(bool tree, bool json) {
  auto *timing = new IpuMlirTiming();
  timing->manager.setEnabled(true);
  timing->manager.setDisplayMode(tree ? DefaultTimingManager::DisplayMode::Tree
                                      : DefaultTimingManager::DisplayMode::List);
  timing->manager.setOutput(createOutputStrategy(
      json ? DefaultTimingManager::OutputFormat::Json : DefaultTimingManager::OutputFormat::Text,
      llvm::errs()));
  timing->root = timing->manager.getRootScope();
  return timing;
}

void ipuMlirTimingBegin(IpuMlirTiming *timing, MlirStringRef name) {
  timing->open.push_back(timing->root.nest(unwrap(name)));
}

void ipuMlirTimingEnd(IpuMlirTiming *timing) {
  if (timing->open.empty())
    return;
  timing->open.back().stop();
  timing->open.pop_back();
}

void ipuMlirTimingAttach(IpuMlirTiming *timing, MlirPassManager passManager) {
  unwrap(passManager)->enableTiming(timing->root);
}

/// Ends the session: the manager prints its report when it is destroyed.
void ipuMlirTimingFinish(IpuMlirTiming *timing) {
  timing->open.clear();
  timing->root.stop();
  delete timing;
}

/// LLVM's POSIX extended regex, as mlir-opt's -verify-diagnostics uses it for `expected-*-re`.
/// Returns null and reports LLVM's error text when `pattern` is not a valid regex.
void *ipuLlvmRegexCreate(MlirStringRef pattern, MlirStringCallback callback, void *data) {
  auto regex = std::make_unique<llvm::Regex>(unwrap(pattern));
  std::string error;
  if (!regex->isValid(error)) {
    emit(callback, data, error);
    return nullptr;
  }
  return regex.release();
}

bool ipuLlvmRegexMatch(void *regex, MlirStringRef text) {
  return static_cast<llvm::Regex *>(regex)->match(unwrap(text));
}

void ipuLlvmRegexDestroy(void *regex) { delete static_cast<llvm::Regex *>(regex); }

/// `text` with every character special to LLVM's regex escaped.
void ipuLlvmRegexEscape(MlirStringRef text, MlirStringCallback callback, void *data) {
  emit(callback, data, llvm::Regex::escape(unwrap(text)));
}

} // extern "C"
