export { createPool, pingDatabase, withTransaction, isUniqueViolation, timestamp, type Pool, type PoolClient, type Queryable, type InSameTransaction } from './pool';
export { migrate, type MigrationResult } from './migrate';
export { openServiceDatabase, openWorkerPool, type ServiceDatabaseConfig } from './service-database';
export { boundedPageQuery, type BoundedPageQuery } from './page-bytes';
export { claimTeamQuota, TeamQuotaExceededError, type TeamQuota } from './quota';
export { untilShortBatch, type BatchesOptions } from './batches';
