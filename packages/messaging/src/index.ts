export { connectNats, type NatsConnection } from './connection';
export { injectTraceContext, extractTraceContext } from './trace-context';
