module.exports = require('./templateDatabase').globalSetup;
