// What the benchmarks build before they start: every service (services/*, so a service added to the
// service table is built without a change here), the CLI that creates teams and tokens, and the
// test helpers that start the system.
export const BENCH_BUILD_FILTERS = ['--filter=./services/*', '--filter=@worklane/cli...', '--filter=@worklane/testing...'];
