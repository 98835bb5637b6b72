export * from './iam.js';
export * from './cms.js';
export * from './crm.js';
export * from './webhooks.js';
export * from './trash.js';
export * from './notifications.js';
export * from './lead-flow.js';
export * from './reports.js';
