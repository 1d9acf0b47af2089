import { headerShapeFault, headerShapeReason, headersFault } from './headers';

const LIMITS = { maxHeaders: 100, maxHeaderBytes: 65_536 };

class Carrier {
  readonly h = 'v';
}

describe('headerShapeFault: a plain object whose values are all strings', () => {
  it.each([
    ['an empty object', {}],
    ['strings', { a: 'x', 'x-app': '' }],
    ['an object without prototype', Object.assign(Object.create(null) as object, { a: 'x' })],
    [
      'own __proto__ and constructor headers',
      JSON.parse('{"__proto__": "p", "constructor": "c"}') as unknown,
    ],
  ])('%s has the shape', (_name, headers) => {
    expect(headerShapeFault(headers)).toBeNull();
  });

  it.each([
    ['an array', ['h'], { name: null, kind: 'an array' }],
    ['a string', 'h', { name: null, kind: 'a string' }],
    ['null', null, { name: null, kind: 'null' }],
    ['undefined', undefined, { name: null, kind: 'undefined' }],
    ['a class instance', new Carrier(), { name: null, kind: 'an object' }],
    ['a Map', new Map([['h', 'v']]), { name: null, kind: 'an object' }],
    ['a number value', { a: 'x', h: 1 }, { name: 'h', kind: 'a number' }],
    ['an object value', { h: { a: 'b' } }, { name: 'h', kind: 'an object' }],
    ['a null value', { h: null }, { name: 'h', kind: 'null' }],
    ['an array value', { h: ['v'] }, { name: 'h', kind: 'an array' }],
  ])('%s does not', (_name, headers, fault) => {
    expect(headerShapeFault(headers)).toEqual(fault);
  });

  it('names the first header whose value is not a string', () => {
    expect(headerShapeFault({ a: 'x', b: 2, c: true })?.name).toBe('b');
  });

  it('headerShapeReason says what the shape fault is, as the inbox and the relay report it', () => {
    expect(headerShapeReason({ name: null, kind: 'an array' })).toBe(
      'headers is an array, not a JSON object of strings',
    );
    expect(headerShapeReason({ name: 'h', kind: 'a number' })).toBe('headers: "h" is a number, not a string');
  });
});

describe('headersFault applies the shape rule first', () => {
  it.each([
    [['h'], 'headers', 'must be an object of string values'],
    [new Carrier(), 'headers', 'must be an object of string values'],
    [new Map([['h', 'v']]), 'headers', 'must be an object of string values'],
    [{ 'x-count': 5 }, 'headers.x-count', 'must be a string'],
  ])('%p: %s %s', (headers, path, reason) => {
    expect(headersFault(headers, LIMITS, true)).toEqual({ path, reason, rule: 'inbox_invalid' });
    expect(headersFault(headers, LIMITS, false)).toEqual({ path, reason, rule: 'inbox_invalid' });
  });
});
