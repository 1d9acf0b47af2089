import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'packages/core/prisma/schema',
  migrations: { path: 'packages/core/prisma/migrations' },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test',
  },
});
