// The delivery suites spend most of their time waiting on real timers (retry schedules, rate
// limits, order waits) with the CPU idle: two workers run two suites side by side (each suite has
// a database and NATS server of its own), which keeps `npm test` well inside its time budget.
module.exports = { ...require('../../jest.preset.cjs'), maxWorkers: 2 };
