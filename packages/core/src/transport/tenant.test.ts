import { FerryConfigError } from '../errors';
import { checkTenantSource, resolveTenant } from './tenant';

describe('tenant source', () => {
  it("'header' takes ferry's tenant header, absent = global", () => {
    expect(resolveTenant('header', {}, 'acme')).toEqual({ ok: true, tenantId: 'acme' });
    expect(resolveTenant('header', {}, undefined)).toEqual({ ok: true, tenantId: null });
  });

  it('a fixed tenant wins; a header naming another tenant is a tenant_mismatch', () => {
    const fixed = { fixed: 'acme' } as const;
    expect(resolveTenant(fixed, {}, undefined)).toEqual({ ok: true, tenantId: 'acme' });
    expect(resolveTenant(fixed, {}, 'acme')).toEqual({ ok: true, tenantId: 'acme' });
    expect(resolveTenant(fixed, {}, 'globex')).toMatchObject({ ok: false, reason: 'tenant_mismatch' });
  });

  it('a function decides alone; a throw or a non-string is tenant_unresolved', () => {
    const byQueue = (m: { queue: string }) => (m.queue === 'q-acme' ? 'acme' : null);
    expect(resolveTenant(byQueue, { queue: 'q-acme' }, 'forged')).toEqual({ ok: true, tenantId: 'acme' });
    expect(resolveTenant(byQueue, { queue: 'other' }, 'forged')).toEqual({ ok: true, tenantId: null });
    const throwing = () => {
      throw new Error('no mapping');
    };
    expect(resolveTenant(throwing, {}, undefined)).toEqual({
      ok: false,
      reason: 'tenant_unresolved',
      detail: 'tenant function threw: no mapping',
    });
    const numeric = (() => 7) as unknown as () => string;
    expect(resolveTenant(numeric, {}, undefined)).toMatchObject({ ok: false, reason: 'tenant_unresolved' });
  });

  it('a tenant that is only whitespace or holds a control character is tenant_unresolved, from a header or a function', () => {
    for (const tenant of [' ', '\t\n', 'acme\u0007', 'acme\u0085']) {
      const detail = expect.stringMatching(
        /^tenant ".*" must not (be only whitespace|contain a control character)/,
      );
      expect(resolveTenant('header', {}, tenant)).toEqual({ ok: false, reason: 'tenant_unresolved', detail });
      expect(resolveTenant(() => tenant, {}, undefined)).toEqual({
        ok: false,
        reason: 'tenant_unresolved',
        detail,
      });
    }
    expect(() => checkTenantSource({ fixed: ' ' })).toThrow(FerryConfigError);
  });

  it('checks the option: default header, bad shapes are FerryConfigError', () => {
    expect(checkTenantSource(undefined)).toBe('header');
    expect(() => checkTenantSource({ fixed: '' })).toThrow(FerryConfigError);
    expect(() => checkTenantSource('topic' as never)).toThrow("must be 'header'");
  });

  it('an async function that rejects is tenant_unresolved and leaves no unhandled rejection', async () => {
    const rejecting = (async () => {
      throw new Error('tenant lookup failed');
    }) as unknown as (m: object) => string;
    expect(resolveTenant(rejecting, {}, undefined)).toMatchObject({ ok: false, reason: 'tenant_unresolved' });
    // Jest fails the test on an unhandled rejection, reported once the microtasks have drained.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  });
});
