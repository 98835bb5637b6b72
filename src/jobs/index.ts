import { activityLogRetention } from '../audit/retention.js';
import { changeLogPrune } from './change-log-prune.js';
import { campaignDelivery, campaignScheduled } from '../modules/crm/delivery.js';
import { importJob } from '../modules/crm/import-engine.js';
import { webhookDeliveryRetention, webhookDispatch } from '../webhooks/dispatcher.js';
import { unusedUploadsCleanup } from '../media/cleanup.js';
import { scheduledBackup } from '../backups/job.js';
import { leadFlowSweep } from './lead-flow-sweep.js';
import { publicFormsCleanup } from './public-forms-cleanup.js';
import { taskDigest } from './task-digest.js';
import { trashPurge } from './trash-purge.js';
import { weeklyReport } from './weekly-report.js';
import { privacyRetention } from '../modules/crm/privacy/retention.js';

/** Every background job of the service, in one place. */
export const JOBS = [activityLogRetention, changeLogPrune, campaignDelivery, campaignScheduled, importJob, webhookDispatch, webhookDeliveryRetention, unusedUploadsCleanup, trashPurge, taskDigest, scheduledBackup, leadFlowSweep, weeklyReport, privacyRetention, publicFormsCleanup];
