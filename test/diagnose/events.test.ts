// Events of a diagnosis from resource rows: a restart is an instance that started while its service
// was already running, never the first appearance of every pod when the store's history begins.
import { describe, expect, it } from 'vitest';
import { newInstances, serviceEvents, startedInstances, serviceIdentity } from '../../src/diagnose/events.js';
import { STATEMENTS, type DeploymentRow } from '../../src/diagnose/reads/index.js';

const MIN = 60_000_000;
const LOOK_FROM = 1_800_000_000_000_000;
const row = (service: string, pod: string, first: number, last = first + 30 * MIN): DeploymentRow =>
  STATEMENTS.deployments.decode({ service_name: service, service_instance_id: pod, k8s_pod_name: pod, first_us: first, last_us: last, n: 100 });

/** The restart events of `cart`'s block over `rows`. */
const restartEvents = (rows: DeploymentRow[], from: number) =>
  serviceEvents({
    service: 'cart',
    from,
    lookFrom: LOOK_FROM,
    deploys: [],
    deployments: rows,
    identity: serviceIdentity(rows, 'cart', from),
    newErrorTypes: new Map(),
    firstErrorAt: new Map(),
    newPatterns: [],
  }).filter((e) => e.event_type === 'restart');

describe('restarts only with evidence', () => {
  const start = LOOK_FROM + 40 * MIN; // the store's history begins well after the look-back does
  const rows = [row('cart', 'cart-a', start), row('cart', 'cart-b', start + 20_000_000), row('orders', 'orders-a', start)];

  it('pods that all appear when the history begins did not restart', () => {
    expect(startedInstances(rows, 'cart', LOOK_FROM)).toEqual([]);
    expect(newInstances(rows, 'cart', start - MIN, start + 60 * MIN, LOOK_FROM)).toBe(0);
    expect(restartEvents(rows, start + 50 * MIN)).toEqual([]);
  });

  it('an instance that replaces another while the service runs is a restart, at its first appearance', () => {
    const replaced = [...rows, row('cart', 'cart-c', start + 25 * MIN)];
    expect(startedInstances(replaced, 'cart', LOOK_FROM)).toEqual([{ id: 'cart-c', at: start + 25 * MIN }]);
    expect(newInstances(replaced, 'cart', start + 20 * MIN, start + 30 * MIN, LOOK_FROM)).toBe(1);
    expect(newInstances(replaced, 'orders', start, start + 60 * MIN, LOOK_FROM)).toBe(0);
    const restarts = restartEvents(replaced, start + 50 * MIN);
    expect(restarts).toHaveLength(1);
    expect(restarts[0]!.description).toContain('cart-c');
    expect(restarts[0]!.detected_at_us).toBe(start + 25 * MIN);
  });
});
