import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { onEvent } from './sharedListener';

describe('onEvent', () => {
  it('shares one listener per emitter and event among its callers, and leaves none once they stopped', () => {
    const emitter = new EventEmitter();
    const heard: string[] = [];
    const stops = Array.from({ length: 30 }, (_, i) =>
      onEvent(emitter, 'error', (e) => heard.push(`${i}:${String(e)}`)),
    );
    const closeStop = onEvent(emitter, 'close', () => heard.push('close'));
    expect(emitter.listenerCount('error')).toBe(1);
    expect(emitter.listenerCount('close')).toBe(1);
    emitter.emit('error', 'x');
    expect(heard).toHaveLength(30);
    stops.forEach((stop) => stop());
    stops[0]!();
    expect(emitter.listenerCount('error')).toBe(0);
    expect(emitter.listenerCount('close')).toBe(1);
    closeStop();
    expect(emitter.listenerCount('close')).toBe(0);
    // Listened to again after all stopped: a fresh listener.
    const again = onEvent(emitter, 'close', () => heard.push('again'));
    emitter.emit('close');
    expect(heard.at(-1)).toBe('again');
    again();
    expect(emitter.eventNames()).toEqual([]);
  });

  it('does not call a caller stopped by one called before it', () => {
    const emitter = new EventEmitter();
    const heard: string[] = [];
    let stopSecond = (): void => undefined;
    onEvent(emitter, 'close', () => {
      heard.push('first');
      stopSecond();
    });
    stopSecond = onEvent(emitter, 'close', () => heard.push('second'));
    onEvent(emitter, 'close', () => heard.push('third'));
    emitter.emit('close');
    expect(heard).toEqual(['first', 'third']);
  });
});
