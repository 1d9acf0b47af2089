/** What the hostileCallbacks tests make an application function do: throw anything, or answer the wrong type. */

/** A value whose every property read, prototype lookup and conversion throws. */
export function hostileProxy(): object {
  const trap = () => {
    throw new Error('trapped');
  };
  return new Proxy({}, { get: trap, getPrototypeOf: trap, has: trap, ownKeys: trap });
}

/** By name: an identity or tenant function's hostile behaviours (each throws or answers no string). */
export const HOSTILE_ANSWERS: Readonly<Record<string, () => unknown>> = {
  'throws-error': () => {
    throw new Error('extractor bug');
  },
  'throws-string': () => {
    throw 'a string';
  },
  'throws-null': () => {
    throw null;
  },
  'throws-proxy': () => {
    throw hostileProxy();
  },
  number: () => 42,
  object: () => ({ id: 'x' }),
  promise: () => Promise.resolve('from-a-promise'),
  'never-settles': () => new Promise(() => undefined),
};
