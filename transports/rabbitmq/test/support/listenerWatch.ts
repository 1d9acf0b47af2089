import { EventEmitter } from 'node:events';

/** The most listeners each amqplib emitter (its class and event) held at once, as they are added. */
export function watchListeners(): { most: Map<string, number>; stop: () => void } {
  const most = new Map<string, number>();
  const { on, once } = EventEmitter.prototype;
  const record = (emitter: EventEmitter, given: PropertyKey): void => {
    const event = typeof given === 'number' ? String(given) : given;
    const name = emitter.constructor.name;
    if (name !== 'ChannelModel' && name !== 'ConfirmChannel' && name !== 'Connection') return;
    const key = `${name} ${String(event)}`;
    most.set(key, Math.max(most.get(key) ?? 0, emitter.listenerCount(event)));
  };
  EventEmitter.prototype.on = function (this: EventEmitter, event, listener) {
    on.call(this, event, listener);
    record(this, event as PropertyKey);
    return this;
  };
  EventEmitter.prototype.addListener = EventEmitter.prototype.on;
  EventEmitter.prototype.once = function (this: EventEmitter, event, listener) {
    once.call(this, event, listener);
    record(this, event as PropertyKey);
    return this;
  };
  return {
    most,
    stop: () => {
      EventEmitter.prototype.on = on;
      EventEmitter.prototype.addListener = on;
      EventEmitter.prototype.once = once;
    },
  };
}
