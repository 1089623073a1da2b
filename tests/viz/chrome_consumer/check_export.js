// Loads a `tinyviz-cli export --chrome` file with tracerbench's trace model (a Trace Event Format parser that builds
// processes, threads and nested events, as trace viewers do) and prints what it found as JSON: per process and thread
// the complete and nested events, the counters, and the number of events by phase, and the model's bounds.
// test_profile_trace compares it with the trace.
const fs = require('fs');
const path = require('path');
const {buildModel} = require(path.join(__dirname, 'node_modules', '@tracerbench', 'trace-model'));

const file = process.argv[2];
const trace = JSON.parse(fs.readFileSync(file, 'utf8'));
const model = buildModel(trace);
const out = {
  start: model.start,
  end: model.end,
  events: 0,
  phases: {},
  processes: []
};
for (const p of model.processes) {
  const proc = {id: p.id, name: p.name, threads: [], counters: 0};
  for (const e of p.events)
    if (e.isCounter()) proc.counters++;
  for (const t of p.threads) {
    const thread = {id: t.id, name: t.name, complete: 0, nested: 0};
    for (const e of t.events) {
      if (e.isMetadata()) continue;
      if (e.isComplete()) thread.complete++;
      if (e.parent !== undefined) thread.nested++;
    }
    proc.threads.push(thread);
  }
  out.processes.push(proc);
}
for (const e of model.events) {
  if (e.isMetadata()) continue;
  out.events++;
  out.phases[e.ph] = (out.phases[e.ph] || 0) + 1;
}
process.stdout.write(JSON.stringify(out) + '\n');
