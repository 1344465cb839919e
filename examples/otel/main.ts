/**
 * OpenTelemetry for every decision: a short run against a local reference PDP it starts itself (a few
 * decisions of each verdict, and one PDP failure), with the spans and metrics printed to the console by
 * the OpenTelemetry SDK's console exporters. Runs offline:
 *
 *   npm run example:otel
 *
 * @module
 */
import { metrics, trace } from '@opentelemetry/api';
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createPep } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';

const policy = {
  agents: ['support-ai'],
  latches: [
    {
      id: 'refund-review',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 500 } },
      verdict: 'ESCALATE',
      reason: 'refunds over 500 need review',
    },
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    {
      id: 'phone-redaction',
      stage: ['output', 'delivery'],
      content: '\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b',
      verdict: 'WARN',
      redact: '[phone]',
      reason: 'phone numbers are redacted',
    },
  ],
};
const pdp = await startDevPdp({ policy, log: false });

// #region telemetry
// Your application registers the OpenTelemetry SDK once (here: print to the console; in production,
// an OTLP exporter, or NodeSDK from @opentelemetry/sdk-node, which also nests spans under the active one).
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())],
});
trace.setGlobalTracerProvider(tracerProvider);
const meterProvider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 60_000 })],
});
metrics.setGlobalMeterProvider(meterProvider);

// `telemetry: true` records with the global tracer and meter; `{ tracer, meter }` passes your own.
const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_otel',
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
  telemetry: true,
});
// Every decision is now one `agent_pep.decision` span, counted in `pep.decisions` and
// `pep.decision.duration`; the PDP receives the W3C `traceparent` of each decision; guardTool's permit
// checks are counted in `pep.permit.verifications` (so is createPermitVerifier({ telemetry: true })).
// #endregion telemetry

const verdicts: string[] = [];
const note = (d: { verdict: string; synthesized?: { code: string } }) =>
  verdicts.push(d.synthesized ? `${d.verdict} (${d.synthesized.code})` : d.verdict);

note(await pep.checkInput('Where is my order ord_1842?'));
// guardTool verifies the permit before the tool runs: counted in `pep.permit.verifications`
const lookupOrder = pep.guardTool('lookup_order', async ({ orderId }) => ({ orderId, status: 'shipped' }));
await lookupOrder({ orderId: 'ord_1842' });
verdicts.push('ALLOW');
note(await pep.authorizeAction('refund_payment', { orderId: 'ord_1842', amount: 129 }));
note(await pep.authorizeAction('refund_payment', { orderId: 'ord_1842', amount: 900 }));
note(await pep.authorizeAction('bank_transfer_funds', { to: 'acct_1', amount: 50 }));
note(await pep.checkOutput('Call us at 555-123-4567.'));
pdp.setFault({ kind: 'status', status: 503 });
note(await pep.checkDelivery('Your refund is on its way.'));
pdp.setFault(null);

await pep.close();
await pdp.close();
await tracerProvider.shutdown();
await meterProvider.shutdown(); // exports the metrics once more, to the console
console.log(`decisions: ${verdicts.join(', ')}`);
