// Jest transform for the ES-module-only packages under node_modules (see esmOnly in
// jest.config.js): ts-jest turns them into CommonJS, and `import.meta.url`, which CommonJS has
// no place for, becomes the file's own URL first (@platformatic/kafka and its helpers read
// files next to themselves with it); a `require` made from it is CommonJS's own.
const { TsJestTransformer } = require('ts-jest');

const OWN_REQUIRE = /\bconst require = createRequire\(import\.meta\.url\);/g;
const IMPORT_META_URL = /\bimport\.meta\.url\b/g;
const FILE_URL = "require('node:url').pathToFileURL(__filename).href";

const rewrite = (source) => source.replace(OWN_REQUIRE, '').replace(IMPORT_META_URL, FILE_URL);

class EsmTransformer extends TsJestTransformer {
  process(source, path, options) {
    return super.process(rewrite(source), path, options);
  }

  getCacheKey(source, path, options) {
    return super.getCacheKey(rewrite(source), path, options);
  }
}

module.exports = {
  createTransformer: (config) => new EsmTransformer(config),
};
