/**
 * Review 106 (ferry installed from its tarballs): an application bundled with esbuild.
 *
 * What I did: in a fresh application with @ferry/core and @ferry/rabbitmq from the tarballs (no
 * optional peers), `import { emit, createRelay } from '@ferry/core'`, then `npx esbuild app.mjs
 * --bundle --platform=node` (as a Lambda build does; AWS CDK's NodejsFunction runs esbuild).
 * What happened: the build failed, `Could not resolve "@opentelemetry/api"` (dist/tracing/otel.js)
 * and `Could not resolve "kysely"` (dist/sql/kysely.js): a bundler follows every `require('…')`
 * of a string, and those loads of optional peers were outside any try block, which is how esbuild
 * (and webpack) tell an optional load, a warning, from a missing module, an error. What should
 * happen: every load of an optional peer dependency in the shipped code is a `require` of the
 * package name inside a try block, so a bundle builds without the peer (and holds it when the
 * application installed it); at run time a missing one is still ferry's FerryConfigError.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { packedFiles } from './packCache';
import { PUBLISHED, ROOT, packageJson } from './workspaces';

/** Each `require('<peer>')` of `peers` in `source`, with whether a try block encloses it. */
function peerRequires(source: string, peers: readonly string[]): { peer: string; inTry: boolean }[] {
  const file = ts.createSourceFile('x.js', source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const found: { peer: string; inTry: boolean }[] = [];
  const visit = (node: ts.Node, inTry: boolean): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'require' &&
      node.arguments.length === 1 &&
      ts.isStringLiteral(node.arguments[0] as ts.Expression)
    ) {
      const name = (node.arguments[0] as ts.StringLiteral).text;
      const peer = peers.find((p) => name === p || name.startsWith(`${p}/`));
      if (peer) found.push({ peer, inTry });
    }
    if (ts.isTryStatement(node)) {
      visit(node.tryBlock, true);
      if (node.catchClause) visit(node.catchClause, inTry);
      if (node.finallyBlock) visit(node.finallyBlock, inTry);
      return;
    }
    ts.forEachChild(node, (child) => visit(child, inTry));
  };
  visit(file, false);
  return found;
}

const withOptionalPeers = PUBLISHED.filter((dir) =>
  Object.values(packageJson(dir).peerDependenciesMeta ?? {}).some((meta) => meta.optional === true),
);

test('the packages with optional peers are found', () => {
  expect(withOptionalPeers).toEqual(
    expect.arrayContaining(['packages/core', 'packages/testing', 'transports/kafka']),
  );
});

describe.each(withOptionalPeers)('%s', (dir) => {
  const pkg = packageJson(dir);
  const peers = Object.entries(pkg.peerDependenciesMeta ?? {})
    .filter(([, meta]) => meta.optional === true)
    .map(([name]) => name);
  const compiled = packedFiles(dir).filter((file) => file.endsWith('.js'));

  it('loads each optional peer dependency by its name, inside a try block (bundlers: optional)', () => {
    const loads = compiled.flatMap((file) =>
      peerRequires(readFileSync(path.join(ROOT, dir, file), 'utf8'), peers).map((load) => ({
        file,
        ...load,
      })),
    );
    // Each optional peer is loaded somewhere (else this test would pass on code that loads none).
    expect([...new Set(loads.map((load) => load.peer))].sort()).toEqual([...peers].sort());
    expect(
      loads.filter((load) => !load.inTry).map((load) => `${load.file}: require('${load.peer}')`),
    ).toEqual([]);
  });
});
