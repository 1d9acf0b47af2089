import { FerryConfigError } from '@ferry/core';

/**
 * The query parameters amqplib reads from a connection URL that ferry checks (review 121), each
 * a decimal integer from `min` (0: the broker's value): `heartbeat` (taken as heartbeatSeconds,
 * which would otherwise replace it without a word), `channelMax` (a consumer uses two channels:
 * the one it consumes on and one for its dead-letter and retry copies; with one, every
 * delivery to dead-letter was requeued for ever) and `frameMax` (AMQP's frames hold at least
 * 4096 bytes; below, and for a value amqplib cannot read, every connect failed).
 */
const URL_PARAMETERS = {
  heartbeat: { min: 0, why: "seconds; 0 takes the broker's" },
  channelMax: { min: 2, why: 'a consumer opens two channels' },
  frameMax: { min: 4096, why: 'the smallest frame AMQP allows' },
} as const;

/**
 * Checks `url`'s query parameters (URL_PARAMETERS) and returns its `heartbeat`, or null; throws
 * FerryConfigError naming `option` (never quoting the URL: it may hold a password).
 */
export function checkUrlParameters(option: string, url: URL): number | null {
  for (const [name, { min, why }] of Object.entries(URL_PARAMETERS)) {
    const value = url.searchParams.get(name);
    if (value === null) continue;
    const number = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
    if (!(number === 0 || number >= min) || number > 2_147_483_647) {
      throw new FerryConfigError(
        option,
        `its ${name} query parameter must be 0 or an integer from ${min} (${why}), got ${JSON.stringify(value.slice(0, 20))}`,
      );
    }
  }
  const heartbeat = url.searchParams.get('heartbeat');
  return heartbeat === null ? null : Number(heartbeat);
}
