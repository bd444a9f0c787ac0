#include "backends/clike/ProgramRun.h"

#include "backends/interp/InterpDevice.h"
#include "tile/Diagnostics.h"

namespace tessera::clike {

void write_inputs(const tile::BoundProgram &program, const TensorMap &inputs, const BufferIO &io) {
  for (const auto &[name, type] : program.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end()) throw tile::Error("error: no value for input '" + name + "'");
    if (it->second.type() != type)
      throw tile::Error("error: input '" + name + "' is " + it->second.type().str() +
                        " but the program was compiled for " + type.str());
    if (it->second.bytes() > 0) io.write(name, it->second);
  }
}

void run_host_step(const tile::BoundProgram &program, const std::string &statement, const BufferIO &io,
                   StepTimer &timer) {
  const tile::BoundStatement *st = nullptr;
  for (const auto &s : program.statements)
    if (s.output == statement) st = &s;
  TESSERA_INTERNAL_ASSERT(st, "no statement " + statement + " for a host step");
  TensorMap env;
  for (const auto &r : statement_reads(program, *st)) {
    HostTensor t(program.type_of(r));
    if (t.bytes() > 0) io.read(r, t);
    env[r] = std::move(t);
  }
  HostTensor v;
  timer.time(StepKind::Host, statement, [&] { v = evaluate_statement(program, *st, env); });
  TESSERA_INTERNAL_ASSERT(v.type() == st->type, "host statement " + statement + " has type " + v.type().str());
  if (v.bytes() > 0) io.write(statement, v);
}

TensorMap read_outputs(const tile::BoundProgram &program, const TensorMap &inputs, const BufferIO &io) {
  TensorMap out;
  for (const auto &[name, type] : program.outputs) {
    bool is_input = false;
    for (const auto &in : program.inputs) is_input |= in.first == name;
    if (is_input) {
      out[name] = inputs.at(name);
      continue;
    }
    HostTensor t(type);
    if (t.bytes() > 0) io.read(name, t);
    out[name] = std::move(t);
  }
  return out;
}

}  // namespace tessera::clike
