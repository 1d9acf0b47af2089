import { Writable } from 'node:stream';
import pino from 'pino';

/**
 * A pino logger at debug and every line it writes, as written (its `err` serializer included):
 * what an operator's log would hold, for tests that check what a line must never carry.
 */
export function writtenLog(): { logger: pino.Logger; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), text: () => chunks.join('') };
}
