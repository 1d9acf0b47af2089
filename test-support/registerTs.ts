import path from 'node:path';

/**
 * The hook a child `node` process runs ferry's TypeScript with (`node -r REGISTER_TS some.ts`):
 * transpile-only with a disk cache, `@ferry/<package>` → its sources (see register-ts.js).
 */
export const REGISTER_TS = path.join(__dirname, 'register-ts.js');
