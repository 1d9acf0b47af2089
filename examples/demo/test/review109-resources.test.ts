import { Resources } from '../src/resources';

// Pure logic: the order and bounds of closing, with closers that fail or never settle.
describe('review 109: Resources', () => {
  it('closes every resource last first even when one fails or never settles; the first failure is rethrown', async () => {
    const closed: string[] = [];
    const resources = new Resources({ closeTimeoutMs: 50 });
    resources.add('first', async (name) => void closed.push(name));
    resources.add('hangs', () => new Promise<void>(() => undefined));
    resources.add('fails', async () => {
      throw new Error('closing failed');
    });
    resources.add('last', async (name) => void closed.push(name));
    await expect(resources.close()).rejects.toThrow('closing failed');
    expect(closed).toEqual(['last', 'first']);
  });

  it('a closer that never settles is a failure naming the bound, and does not stop the others', async () => {
    const closed: string[] = [];
    const resources = new Resources({ closeTimeoutMs: 50 });
    resources.add('first', async (name) => void closed.push(name));
    resources.add('hangs', () => new Promise<void>(() => undefined));
    await expect(resources.close()).rejects.toThrow(/did not finish closing within 50 ms/);
    expect(closed).toEqual(['first']);
  });

  it("closeQuietly after a failed start closes everything and throws nothing: the start's failure is the one to report", async () => {
    const closed: string[] = [];
    const resources = new Resources({ closeTimeoutMs: 50 });
    resources.add('first', async (name) => void closed.push(name));
    resources.add('fails', async () => {
      throw new Error('closing failed');
    });
    await expect(resources.closeQuietly()).resolves.toBeUndefined();
    expect(closed).toEqual(['first']);
    await expect(resources.close()).resolves.toBeUndefined(); // closed already: nothing runs twice
    expect(closed).toEqual(['first']);
  });
});
