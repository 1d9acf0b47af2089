import { FerryError, type InboxAcceptInput, type InboxAcceptResult } from '@ferry/core';
import { groupOrdered, heldBehind } from './groupOrder';

const input = (id: string): InboxAcceptInput =>
  ({ consumer: 'c', messageId: id, tenantId: null, payload: {} }) as InboxAcceptInput;
const groupOf = (i: InboxAcceptInput) => i.messageId.slice(0, 1);

/** Accepts every input but those in `failing`, which throw `error` whenever offered. */
function acceptor(failing: ReadonlySet<string>, error: unknown) {
  const offered: string[][] = [];
  const acceptMany = async (inputs: readonly InboxAcceptInput[]): Promise<InboxAcceptResult[]> => {
    offered.push(inputs.map((i) => i.messageId));
    if (inputs.some((i) => failing.has(i.messageId))) throw error;
    return inputs.map((i) => ({ kind: 'accepted', id: i.messageId }));
  };
  return { offered, acceptMany };
}

const summary = (results: readonly InboxAcceptResult[]) =>
  results.map((r) => (heldBehind(r) ? 'held' : r.kind));

describe('groupOrdered: a FIFO batch keeps each group in order when one message fails alone', () => {
  it('offers one at a time after a failure; later messages of the failed group are held, other groups go on', async () => {
    const { offered, acceptMany } = acceptor(
      new Set(['a1']),
      new FerryError('FERRY_DATABASE_ERROR', 'deadlock'),
    );
    const results = await groupOrdered(acceptMany, groupOf)(['a1', 'b1', 'a2', 'b2'].map(input));
    expect(summary(results)).toEqual(['invalid', 'accepted', 'held', 'accepted']);
    expect(offered).toEqual([['a1', 'b1', 'a2', 'b2'], ['a1'], ['b1'], ['b2']]);
    expect(heldBehind(results[2]!)?.error).toBeInstanceOf(FerryError);
  });

  it('holds every message when none was accepted and the failure was retriable', async () => {
    const { acceptMany } = acceptor(new Set(['a1', 'b1']), new FerryError('FERRY_DATABASE_ERROR', 'down'));
    const results = await groupOrdered(acceptMany, groupOf)(['a1', 'b1', 'a2'].map(input));
    expect(summary(results)).toEqual(['held', 'held', 'held']);
  });

  it('rethrows a batch-wide failure, and the failure of a single message, for the caller to handle', async () => {
    const outage = new FerryError('FERRY_DATABASE_UNAVAILABLE', 'down', { retriable: true });
    await expect(
      groupOrdered(acceptor(new Set(['a1']), outage).acceptMany, groupOf)(['a1', 'a2'].map(input)),
    ).rejects.toBe(outage);
    const alone = new FerryError('FERRY_DATABASE_ERROR', 'deadlock');
    await expect(
      groupOrdered(acceptor(new Set(['a1']), alone).acceptMany, groupOf)([input('a1')]),
    ).rejects.toBe(alone);
  });

  it('remembers a failed group across the calls made for one batch (retried in parts after a timeout)', async () => {
    const { offered, acceptMany } = acceptor(
      new Set(['a1']),
      new FerryError('FERRY_DATABASE_ERROR', 'deadlock'),
    );
    const accept = groupOrdered(acceptMany, groupOf);
    expect(summary(await accept(['a1', 'b1'].map(input)))).toEqual(['invalid', 'accepted']);
    expect(summary(await accept(['a2', 'b2'].map(input)))).toEqual(['held', 'accepted']);
    expect(summary(await accept([input('a3')]))).toEqual(['held']);
    expect(offered).toEqual([['a1', 'b1'], ['a1'], ['b1'], ['b2']]);
  });
});
