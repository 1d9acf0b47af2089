module.exports = require('./templateDatabase').globalTeardown;
