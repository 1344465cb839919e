// What one decision's telemetry costs, in a tight loop with no network: agent-pep's recorder does
// for each decision what CONTRACT.md section 10 asks (a span started, its trace context injected,
// the call run in its context, the span ended; one `pep.decision.duration` point and one
// `pep.decisions` point). The set-ups:
// - the API's no-op tracer and meter: agent-pep's own code for a span that records nothing (its
//   attributes are not built, and its invalid ids send no `traceparent`);
// - a recording span double (valid ids, methods that do nothing) and the no-op meter: agent-pep's
//   own code for a span that records (attributes built, `traceparent` written), without an SDK;
// - the OpenTelemetry SDK's tracer (recording every span, or sampling 1% of the traces) and/or meter,
//   as the bench's telemetry rows set them up.
// It splits the cost behind those rows (BENCHMARKS.md); on the decision path, with the rest of a
// decision between the calls, each costs more than here (caches, GC).
//
//   npm run bench:telemetry            (builds first; or, once built: node bench/telemetry-cost.js [rounds])
//
// Prints, per set-up, the median over interleaved rounds of the process's CPU time per decision, and
// its ratio to the first set-up.
import { telemetrySdk } from './run.js';

const USAGE = 'usage: node bench/telemetry-cost.js [rounds], rounds a whole number from 1 to 999 (default 9)\n';
const args = process.argv.slice(2);
if (args.length > 1 || (args.length === 1 && !/^[1-9][0-9]{0,2}$/.test(args[0]))) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const ROUNDS = args.length === 1 ? Number(args[0]) : 9;
let createTelemetry;
try {
  ({ createTelemetry } = await import('../dist/telemetry.js'));
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  process.stderr.write('bench/telemetry-cost.js measures the built package: run `npm run build` first\n');
  process.exit(1);
}
const PER_ROUND = 20_000;
const CHUNK = 128;
const TARGET = { origin: 'http://127.0.0.1:8787' };
/** An ALLOW as the client makes it (the attributes a span gets from a PDP's answer). */
const DECISION = Object.freeze({
  stage: 'input',
  verdict: 'ALLOW',
  requestId: '7f0b1d2e-1111-4222-8333-944455556666',
  decisionId: 'd1',
});

/** A span that records and does nothing else: what agent-pep does for a sampled span, without an SDK. */
class RecordingSpan {
  static CONTEXT = Object.freeze({
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: 1,
  });
  spanContext() {
    return RecordingSpan.CONTEXT;
  }
  isRecording() {
    return true;
  }
  setAttributes() {
    return this;
  }
  setStatus() {
    return this;
  }
  end() {}
}
const recordingTracer = { startSpan: () => new RecordingSpan() };

const otel = await telemetrySdk();
const noopTracer = otel.api.trace.getTracer('bench');
const noopMeter = otel.api.metrics.getMeter('bench');
const setups = [
  ['no-op tracer and meter (span not recording)', noopTracer, noopMeter],
  ['recording span double, no-op meter', recordingTracer, noopMeter],
  ['SDK tracer at 1%, no-op meter', otel.sampledTracer, noopMeter],
  ['SDK tracer, no-op meter', otel.tracer, noopMeter],
  ['no-op tracer, SDK meter', noopTracer, otel.meter],
  ['SDK tracer at 1%, SDK meter', otel.sampledTracer, otel.meter],
  ['SDK tracer and meter (the bench row)', otel.tracer, otel.meter],
].map(([name, tracer, meter]) => ({ name, telemetry: createTelemetry({ tracer, meter }, TARGET), ns: [] }));

/** One decision's telemetry, as the client records it. */
function decision(telemetry) {
  const span = telemetry.start();
  const headers = { 'content-type': 'application/json', 'x-request-id': DECISION.requestId };
  span.inject(headers);
  span.run(() => headers);
  telemetry.end(span, DECISION, 1, 0.0012);
  otel.trim();
}

/**
 * One round of `PER_ROUND` decisions, yielding to the event loop every `CHUNK` of them (so that the
 * SDK's span processor exports as it does in a service, rather than drop what it cannot queue).
 * @returns the process's CPU time per decision, in nanoseconds
 */
async function round(telemetry) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i += CHUNK) {
    for (let j = 0; j < CHUNK; j++) decision(telemetry);
    await new Promise(setImmediate);
  }
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) * 1000) / PER_ROUND;
}

for (const s of setups) await round(s.telemetry);
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < setups.length; k++) {
    const s = setups[(k + r) % setups.length];
    s.ns.push(await round(s.telemetry));
  }
}
await otel.shutdown();

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const first = median(setups[0].ns);
process.stdout.write(
  `telemetry CPU time per decision, tight loop · node ${process.version} · ${ROUNDS} rounds of ${PER_ROUND}\n\n`,
);
for (const s of setups) {
  const ns = median(s.ns);
  process.stdout.write(
    `${s.name.padEnd(42)} ${ns.toFixed(0).padStart(6)} ns  ${(ns / first).toFixed(1).padStart(5)}x\n`,
  );
}
