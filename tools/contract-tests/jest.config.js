module.exports = { ...require('../../jest.preset.cjs'), testTimeout: 120_000 };
