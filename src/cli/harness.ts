// The commands of benchmark-harness runs: `tds detect` (detection on demand), and `tds replay`,
// `tds snapshot`, `tds restore` (replay.ts, snapshot.ts).
import { UsageError, optFlag, optValue, parseTimestampUs } from './args.js';
import { asAdmin, clientOf, finish, type Ctx } from './context.js';
import { cmdReplay } from './replay/index.js';
import { cmdRestore, cmdSnapshot } from './snapshot.js';

/** A detection pass over a large store takes longer than a read: the call's default time limit. */
const DETECT_TIMEOUT_MS = 600_000;
/** `--wait`: how long ingest must look idle, and how long to wait for that at most. */
const SETTLE_MS = 200;
const SETTLE_LIMIT_MS = 120_000;

/** Waits until the server has had no ingest in flight for SETTLE_MS (two looks at /admin/status). */
async function settle(ctx: Ctx): Promise<void> {
  const client = clientOf(asAdmin(ctx));
  const deadline = Date.now() + SETTLE_LIMIT_MS;
  let quietSince: number | null = null;
  for (;;) {
    const st = await client.getAdminStatus();
    if (!st.ok) return; // detection itself reports the problem (auth, connection)
    const busy = (st.body.status.ingest as { inflight_bytes?: number }).inflight_bytes ?? 0;
    const now = Date.now();
    if (busy > 0) quietSince = null;
    else if (quietSince === null) quietSince = now;
    else if (now - quietSince >= SETTLE_MS) return;
    if (now > deadline) throw new UsageError(`ingest did not settle within ${SETTLE_LIMIT_MS / 1000} s`, 'stop the senders, or run tds detect without --wait');
    await new Promise((r) => setTimeout(r, SETTLE_MS / 2));
  }
}

async function cmdDetect(ctx: Ctx): Promise<number> {
  if (ctx.args.positional.length) throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args.positional[0])}`, 'tds detect --help');
  const asOf = optValue(ctx.args, 'as-of');
  const input = {
    tenant: optValue(ctx.args, 'tenant'),
    as_of_ts: asOf === undefined ? undefined : parseTimestampUs('as-of', asOf),
    until_idle: optFlag(ctx.args, 'until-idle') || undefined,
  };
  if (optFlag(ctx.args, 'wait')) await settle(ctx);
  const timeoutMs = ctx.timeoutGiven ? ctx.timeoutMs : DETECT_TIMEOUT_MS;
  return finish(ctx, await clientOf(asAdmin(ctx)).detectNow(input, { timeoutMs }));
}

export const HARNESS_HANDLERS: Record<string, (ctx: Ctx) => Promise<number>> = {
  replay: cmdReplay,
  detect: cmdDetect,
  snapshot: cmdSnapshot,
  restore: cmdRestore,
};
