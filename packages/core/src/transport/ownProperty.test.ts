import { setOwnProperty } from './ownProperty';

describe('setOwnProperty', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'x-app'])(
    'sets %s as an own enumerable property and leaves the prototype alone',
    (name) => {
      const target: Record<string, string> = {};
      setOwnProperty(target, name, 'v');
      expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
      expect(Object.hasOwn(target, name)).toBe(true);
      expect(Object.entries(target)).toEqual([[name, 'v']]);
      expect(JSON.parse(JSON.stringify(target))).toEqual(JSON.parse(`{${JSON.stringify(name)}: "v"}`));
    },
  );

  it('keeps an object value under __proto__ as a value, not as the prototype', () => {
    const target: Record<string, unknown> = {};
    setOwnProperty(target, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect((target as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(target, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('overwrites a value set before, in its original place', () => {
    const target: Record<string, string> = { a: '1', b: '2' };
    setOwnProperty(target, 'a', '3');
    expect(Object.entries(target)).toEqual([
      ['a', '3'],
      ['b', '2'],
    ]);
  });

  it('sets a symbol key, and a non-enumerable property when asked', () => {
    const key = Symbol('k');
    const target: Record<PropertyKey, unknown> = {};
    setOwnProperty(target, key, 1);
    setOwnProperty(target, 'hidden', 2, false);
    expect(target[key]).toBe(1);
    expect(Object.keys(target)).toEqual([]);
    expect(Object.getOwnPropertyDescriptor(target, 'hidden')).toEqual({
      value: 2,
      enumerable: false,
      writable: true,
      configurable: true,
    });
  });
});
