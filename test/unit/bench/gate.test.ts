/** The bench is a gate (issue 16): ratios -> verdicts -> misses, and where results are written. */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: bench/run.js is plain JavaScript without types
import * as bench from '../../../bench/run.js';

const {
  computeRatios,
  formatNarrowMargins,
  missesOf,
  narrowMarginsOf,
  PROFILES,
  paired,
  pairedSpread,
  parseArgs,
  SECTIONS,
  TARGETS,
  verdictOf,
} = bench;

type Ratios = Record<string, number | null>;
const passing = (): Ratios =>
  Object.fromEntries(
    Object.entries(TARGETS as Record<string, { op: string; value: number }>).map(([k, t]) => [
      k,
      t.op === '<=' ? t.value : t.op === '>=' ? t.value : t.value + 1,
    ]),
  );

describe('targets', () => {
  it('every target at its bound passes; just past it misses, with how far', () => {
    expect(missesOf(passing())).toEqual([]);
    const r = { ...passing(), authorizeAction_ops_c64_vs_undici: 0.78, checkInput_p50_c1_vs_undici: 1.2 };
    const misses = missesOf(r) as { key: string; short: number }[];
    expect(misses.map((m) => m.key).sort()).toEqual([
      'authorizeAction_ops_c64_vs_undici',
      'checkInput_p50_c1_vs_undici',
    ]);
    expect(misses.find((m) => m.key === 'authorizeAction_ops_c64_vs_undici')?.short).toBe(0.07);
  });

  it('a missing figure is a miss, not a pass', () => {
    expect(missesOf({ ...passing(), verify_ops_vs_jose: null })).toHaveLength(1);
    expect(verdictOf('verify_ops_vs_jose', null)).toBe('n/a');
  });

  it('holds the issue-16 targets', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.authorizeAction_ops_c64_vs_undici).toEqual({ op: '>=', value: 0.85 });
    expect(t.checkInput_p50_c1_vs_undici).toEqual({ op: '<=', value: 1.1 });
    expect(t.checkInput_ops_c64_vs_undici).toEqual({ op: '>=', value: 0.9 });
    expect(t.verify_ops_vs_jose).toEqual({ op: '>=', value: 0.9 });
    expect(t.checkInput_ops_c64_vs_opa).toEqual({ op: '>=', value: 8 });
    expect(t.checkInput_ops_c64_vs_cerbos).toEqual({ op: '>=', value: 4 });
    expect(t.authorizeAction_3_interceptors_vs_none_c64).toEqual({ op: '>=', value: 0.95 });
    // Replaced by telemetry_vs_otel_undici_c64 (issue 30): kept for information.
    expect(t.checkInput_telemetry_vs_none_c64).toEqual({ op: 'info', value: 0.9 });
  });

  it('the two rows that split the telemetry cost are information only: however low, never a miss', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.checkInput_telemetry_noop_vs_none_c64?.op).toBe('info');
    expect(t.checkInput_telemetry_sampled_vs_none_c64?.op).toBe('info');
    const low = {
      ...passing(),
      checkInput_telemetry_noop_vs_none_c64: 0.1,
      checkInput_telemetry_sampled_vs_none_c64: 0.1,
    };
    expect(missesOf(low)).toEqual([]);
    expect(verdictOf('checkInput_telemetry_sampled_vs_none_c64', 0.1)).toBe('info');
  });

  it('holds the issue-13 targets: AuthZEN on real Cerbos beside @cerbos/http; the batch against 8 singles is information since issue 43', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.authorizeActions_8_calls_per_s_vs_8_singles_c16).toEqual({ op: 'info', value: 4 });
    expect(t.checkInput_authzen_vs_cerbos_http_real_cerbos_c16).toEqual({ op: '>=', value: 0.9 });
  });
});

describe('the session rows (issues 25, 41)', () => {
  it('holds the targets: a 200-step session at 0.9 of an empty one, the Redis store at 0.6 of memory', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.devpdp_session200_vs_empty).toEqual({ op: '>=', value: 0.9 });
    expect(t.devpdp_session_redis_vs_memory).toEqual({ op: '>=', value: 0.6 });
  });

  it('computes both ratios from the session rows, side by side in one run', () => {
    const row = (client: string, ops: number) => ({ scenario: 'sessions', client, concurrency: 16, ops_per_s: ops });
    const rows = [
      row('dev PDP decision (empty session)', 1000),
      row('dev PDP decision (200-step session)', 900),
      row('dev PDP decision (200-step session, redis store)', 450),
    ];
    const ratios = computeRatios(rows, null) as Ratios;
    expect(ratios.devpdp_session200_vs_empty).toBe(0.9);
    expect(ratios.devpdp_session_redis_vs_memory).toBe(0.5);
    // a section that did not run (or rows skipped) gives no figure: a miss, never a pass
    expect((computeRatios([], null) as Ratios).devpdp_session200_vs_empty).toBeNull();
    expect(SECTIONS).toContain('sessions');
  });
});

describe('the dev PDP beside real Cerbos (issue 41)', () => {
  const row = (client: string, batches: number[]) => ({
    scenario: 'devpdp',
    client,
    concurrency: 16,
    ops_per_s: batches.reduce((a, b) => a + b, 0) / batches.length,
    batch_ops_per_s: batches,
  });

  it('holds the targets: the dev PDP with the contract policy at 1.0 of real Cerbos, the demo policy for information', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.devpdp_vs_cerbos_c16).toEqual({ op: '>=', value: 1 });
    expect(t.devpdp_demo_policy_vs_contract_policy_c16?.op).toBe('info');
    expect(SECTIONS).toContain('devpdp');
  });

  it('pairs the rows round by round: the median of the per-round ratios', () => {
    const rows = [
      row('agent-pep checkInput (authzen, dev PDP, contract policy)', [1000, 1200, 900]),
      row('agent-pep checkInput (authzen, real Cerbos, beside the dev PDP)', [1000, 1000, 1000]),
      row('agent-pep checkInput (authzen, dev PDP, demo policy)', [500, 600, 450]),
    ];
    const ratios = computeRatios(rows, null) as Ratios;
    expect(ratios.devpdp_vs_cerbos_c16).toBe(1);
    expect(ratios.devpdp_demo_policy_vs_contract_policy_c16).toBe(0.5);
    expect((computeRatios([], null) as Ratios).devpdp_vs_cerbos_c16).toBeNull();
  });
});

describe('the floor rows (issue 30)', () => {
  it('holds the targets: checkInput and authorizeAction against the true floor, telemetry against OpenTelemetry undici', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.checkInput_ops_c64_vs_floor).toEqual({ op: '>=', value: 0.9 });
    // Issue 43: against a floor that does none of the contract's work; information now.
    expect(t.authorizeAction_ops_c64_vs_floor).toEqual({ op: 'info', value: 0.85 });
    expect(t.checkInput_p50_c1_vs_floor).toEqual({ op: '<=', value: 1.1 });
    expect(t.telemetry_vs_otel_undici_c64).toEqual({ op: '>=', value: 1 });
    expect(t.otel_undici_floor_vs_floor_c64?.op).toBe('info');
  });

  it('prices telemetry against the floor instrumented by OpenTelemetry, side by side in one run', () => {
    const row = (client: string, concurrency: number, ops: number, p50 = 1) => ({
      scenario: 'decision',
      client,
      concurrency,
      ops_per_s: ops,
      p50_ms: p50,
    });
    const rows = [
      row('floor (undici Pool dispatch)', 64, 1000),
      row('floor (undici Pool dispatch)', 1, 500, 0.2),
      row('floor (undici Pool dispatch, action)', 64, 800),
      row('floor + @opentelemetry/instrumentation-undici', 64, 800),
      row('agent-pep checkInput', 64, 950),
      row('agent-pep checkInput', 1, 450, 0.21),
      row('agent-pep authorizeAction', 64, 720),
      row('agent-pep checkInput (telemetry)', 64, 760),
    ];
    const ratios = computeRatios(rows, null) as Ratios;
    expect(ratios.checkInput_ops_c64_vs_floor).toBe(0.95);
    expect(ratios.authorizeAction_ops_c64_vs_floor).toBe(0.9);
    expect(ratios.checkInput_p50_c1_vs_floor).toBe(1.05);
    // agent-pep keeps 0.8 with telemetry on, the floor 0.8 with OpenTelemetry's undici instrumentation
    expect(ratios.telemetry_vs_otel_undici_c64).toBe(1);
    expect(ratios.otel_undici_floor_vs_floor_c64).toBe(0.8);
    expect(missesOf({ ...ratios, telemetry_vs_otel_undici_c64: 0.99 }).map((m: { key: string }) => m.key)).toContain(
      'telemetry_vs_otel_undici_c64',
    );
    // no floor row: no figure, a miss
    expect((computeRatios([], null) as Ratios).checkInput_ops_c64_vs_floor).toBeNull();
  });
});

describe('the startup rows (issue 30)', () => {
  it('holds the targets: hook start at most 1.0x a node + fetch script, import at most 1.3x undici', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.hook_start_vs_node_fetch).toEqual({ op: '<=', value: 1.0 });
    expect(t.import_vs_undici).toEqual({ op: '<=', value: 1.3 });
    expect(t.import_and_client_vs_undici?.op).toBe('info');
  });

  it('computes both ratios from the medians of the startup rows; a slower hook is a miss', () => {
    const row = (client: string, p50: number) => ({ scenario: 'startup', client, concurrency: 1, p50_ms: p50 });
    const rows = [
      row('agent-pep hook claude-code (PreToolUse)', 110),
      row('node + 15-line fetch script (same request)', 100),
      row("import('agent-pep') in a fresh process", 12),
      row("import('undici') in a fresh process", 20),
    ];
    const ratios = computeRatios(rows, null) as Ratios;
    expect(ratios.hook_start_vs_node_fetch).toBe(1.1);
    expect(ratios.import_vs_undici).toBe(0.6);
    const startup = {
      hook_start_vs_node_fetch: ratios.hook_start_vs_node_fetch,
      import_vs_undici: ratios.import_vs_undici,
    };
    expect(missesOf({ ...passing(), ...startup }).map((m: { key: string }) => m.key)).toEqual([
      'hook_start_vs_node_fetch',
    ]);
    expect((computeRatios([], null) as Ratios).hook_start_vs_node_fetch).toBeNull();
    expect(SECTIONS).toContain('startup');
  });
});

describe('the HTTP hook rows (issue 40)', () => {
  it('holds the target: a round trip through hook serve at most a tenth of the process hook; the p50 is information', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.hook_http_vs_process).toEqual({ op: '<=', value: 0.1 });
    expect(t.hook_http_p50_ms?.op).toBe('info');
  });

  it('computes the ratio from the medians of the startup rows; a slower endpoint is a miss', () => {
    const row = (client: string, p50: number) => ({ scenario: 'startup', client, concurrency: 1, p50_ms: p50 });
    const rows = [
      row('agent-pep hook claude-code (PreToolUse)', 200),
      row('agent-pep hook serve, POST /hooks/claude-code (PreToolUse)', 30),
    ];
    const ratios = computeRatios(rows, null) as Ratios;
    expect(ratios.hook_http_p50_ms).toBe(30);
    expect(ratios.hook_http_vs_process).toBe(0.15);
    expect(
      missesOf({ ...passing(), hook_http_vs_process: ratios.hook_http_vs_process }).map((m: { key: string }) => m.key),
    ).toEqual(['hook_http_vs_process']);
    expect((computeRatios([], null) as Ratios).hook_http_vs_process).toBeNull();
  });
});

describe('where results go', () => {
  it('a full run writes bench/results.json; --out names another path', () => {
    expect(parseArgs([], '/r.json')).toEqual({ profile: PROFILES.full, out: '/r.json' });
    expect(parseArgs(['--out', '/x.json'], '/r.json').out).toBe('/x.json');
  });
  it('--quick and --smoke write nowhere unless asked', () => {
    expect(parseArgs(['--quick'], '/r.json')).toEqual({ profile: PROFILES.quick, out: null });
    expect(parseArgs(['--smoke'], '/r.json').out).toBeNull();
    expect(parseArgs(['--quick', '--out=/q.json'], '/r.json').out).toBe('/q.json');
  });
  it('--only runs some sections, writes nowhere unless asked, and refuses an unknown section', () => {
    expect(parseArgs(['--only', 'decisions,verify'], '/r.json')).toEqual({
      profile: PROFILES.full,
      out: null,
      only: ['decisions', 'verify'],
    });
    expect(parseArgs(['--quick', '--only=batch', '--out', '/o.json'], '/r.json')).toEqual({
      profile: PROFILES.quick,
      out: '/o.json',
      only: ['batch'],
    });
    expect(() => parseArgs(['--only', 'decision'], '/r.json')).toThrow(/unknown section decision/);
    expect(() => parseArgs(['--only'], '/r.json')).toThrow(/needs sections/);
  });
  it('an unknown flag or --out without a path is an error', () => {
    expect(() => parseArgs(['--fast'], '/r.json')).toThrow(/unknown flag/);
    expect(() => parseArgs(['--out'], '/r.json')).toThrow(/needs a path/);
  });
});

describe("paired ratios (a round's batches side by side)", () => {
  it('is the median of the per-round ratios: one round with a spike does not move it', () => {
    const a = { ops_per_s: 0, batch_ops_per_s: [100, 100, 10, 100, 100] };
    const b = { ops_per_s: 0, batch_ops_per_s: [100, 110, 100, 90, 100] };
    expect(paired('ops_per_s', a, b)).toBe(1);
  });
  it('is a ratio of ratios with four rows: (a/b) / (c/d) in each round', () => {
    const row = (xs: number[]) => ({ batch_ops_per_s: xs });
    expect(paired('ops_per_s', row([80, 80]), row([100, 100]), row([40, 40]), row([100, 100]))).toBe(2);
  });
  it('falls back to the whole-run figures when a side has no batches or another count of them', () => {
    expect(paired('p50_ms', { p50_ms: 2 }, { p50_ms: 1, batch_p50_ms: [1, 1] })).toBe(2);
    expect(paired('ops_per_s', { ops_per_s: 3, batch_ops_per_s: [1, 2] }, { ops_per_s: 2, batch_ops_per_s: [1] })).toBe(
      1.5,
    );
    expect(paired('ops_per_s', undefined, { ops_per_s: 2 })).toBeNull();
  });
});

describe('the floors that do the work (issue 43)', () => {
  it('holds the targets: authorizeAction and the 8-call batch at 0.9 of floors doing the same work', () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.authorizeAction_ops_c64_vs_permit_floor).toEqual({ op: '>=', value: 0.9 });
    expect(t.authorizeActions_8_vs_floor_batch_c16).toEqual({ op: '>=', value: 0.9 });
  });

  it('computes both ratios from their floor rows, round by round', () => {
    const rows = [
      {
        scenario: 'decision',
        client: 'floor (dispatch, action, answer checks, rule 5)',
        concurrency: 64,
        ops_per_s: 1000,
        batch_ops_per_s: [1000, 1000, 1000],
      },
      {
        scenario: 'decision',
        client: 'agent-pep authorizeAction',
        concurrency: 64,
        ops_per_s: 900,
        batch_ops_per_s: [950, 880, 800],
      },
      {
        scenario: 'batch',
        client: 'floor batch (8 evaluations, answer checks, rule 5)',
        concurrency: 16,
        ops_per_s: 500,
        calls_per_s: 4000,
        batch_ops_per_s: [500, 500, 500],
      },
      {
        scenario: 'batch',
        client: 'agent-pep authorizeActions (8 calls, authzen)',
        concurrency: 16,
        ops_per_s: 430,
        calls_per_s: 3440,
        batch_ops_per_s: [400, 430, 460],
      },
    ];
    const spreads: Record<string, unknown> = {};
    const ratios = computeRatios(rows, null, spreads) as Ratios;
    expect(ratios.authorizeAction_ops_c64_vs_permit_floor).toBe(0.88);
    expect(ratios.authorizeActions_8_vs_floor_batch_c16).toBe(0.86);
    expect(spreads.authorizeAction_ops_c64_vs_permit_floor).toEqual({ min: 0.8, median: 0.88, max: 0.95, rounds: 3 });
    expect(spreads.authorizeActions_8_vs_floor_batch_c16).toEqual({ min: 0.8, median: 0.86, max: 0.92, rounds: 3 });
    expect(missesOf({ ...passing(), ...ratios }).map((m: { key: string }) => m.key)).toEqual(
      expect.arrayContaining(['authorizeAction_ops_c64_vs_permit_floor', 'authorizeActions_8_vs_floor_batch_c16']),
    );
  });
});

describe('the text floor that does the work (round 4, fourth session)', () => {
  it("prices checkInput and the bare floor against a floor doing every text decision's work, for information", () => {
    const t = TARGETS as Record<string, { op: string; value: number }>;
    expect(t.checkInput_ops_c64_vs_text_floor?.op).toBe('info');
    expect(t.text_floor_vs_floor_c64?.op).toBe('info');
    // the gated row stays as issue 43 set it
    expect(t.checkInput_ops_c64_vs_floor).toEqual({ op: '>=', value: 0.9 });
    const row = (client: string, ops: number) => ({ scenario: 'decision', client, concurrency: 64, ops_per_s: ops });
    const ratios = computeRatios(
      [
        row('floor (undici Pool dispatch)', 1000),
        row('floor (dispatch, text, fresh request, answer checks)', 800),
        row('agent-pep checkInput', 840),
      ],
      null,
    ) as Ratios;
    expect(ratios.checkInput_ops_c64_vs_text_floor).toBe(1.05);
    expect(ratios.text_floor_vs_floor_c64).toBe(0.8);
    expect(ratios.checkInput_ops_c64_vs_floor).toBe(0.84);
    // a checkInput above the text floor still misses against the bare one: the information rows gate nothing
    const three = {
      checkInput_ops_c64_vs_floor: ratios.checkInput_ops_c64_vs_floor,
      checkInput_ops_c64_vs_text_floor: ratios.checkInput_ops_c64_vs_text_floor,
      text_floor_vs_floor_c64: ratios.text_floor_vs_floor_c64,
    };
    expect(missesOf({ ...passing(), ...three }).map((m: { key: string }) => m.key)).toEqual([
      'checkInput_ops_c64_vs_floor',
    ]);
  });
});

describe('the spread of a gated ratio over its rounds (issue 43)', () => {
  it('gates on the median of the per-round ratios and keeps their min and max', () => {
    const s = pairedSpread(
      'ops_per_s',
      { batch_ops_per_s: [80, 95, 91, 70, 92] },
      { batch_ops_per_s: [100, 100, 100, 100, 100] },
    );
    expect(s).toEqual({ value: 0.91, min: 0.7, median: 0.91, max: 0.95, rounds: 5 });
    expect(paired('ops_per_s', { batch_ops_per_s: [80, 95, 91] }, { batch_ops_per_s: [100, 100, 100] })).toBe(0.91);
  });

  it('a ratio without rounds has no spread', () => {
    const spreads: Record<string, unknown> = {};
    const row = (client: string, ops: number) => ({ scenario: 'sessions', client, concurrency: 16, ops_per_s: ops });
    computeRatios(
      [row('dev PDP decision (empty session)', 1000), row('dev PDP decision (200-step session)', 900)],
      null,
      spreads,
    );
    expect(spreads.devpdp_session200_vs_empty).toBeUndefined();
  });

  it('names a gated ratio whose rounds spread wider than its distance to the target, and no other', () => {
    const ratios = {
      ...passing(),
      checkInput_ops_c64_vs_floor: 0.93,
      verify_ops_vs_jose: 1.4,
      checkInput_telemetry_vs_none_c64: 0.5,
    };
    const spreads = {
      checkInput_ops_c64_vs_floor: { min: 0.86, median: 0.93, max: 0.97, rounds: 8 },
      verify_ops_vs_jose: { min: 1.3, median: 1.4, max: 1.45, rounds: 8 },
      checkInput_telemetry_vs_none_c64: { min: 0.1, median: 0.5, max: 0.9, rounds: 8 },
    };
    const narrow = narrowMarginsOf(ratios, spreads) as { key: string; spread: number; distance: number }[];
    expect(narrow.map((m) => m.key)).toEqual(['checkInput_ops_c64_vs_floor']);
    expect(narrow[0]).toMatchObject({ spread: 0.11, distance: 0.03 });
    expect(formatNarrowMargins(narrow)).toMatch(/^SPREAD checkInput_ops_c64_vs_floor: median 0.93/);
  });
});
