import { activityLogRetention } from '../audit/retention.js';
import { campaignDelivery, campaignScheduled } from '../modules/crm/delivery.js';

/** Every background job of the service, in one place. */
export const JOBS = [activityLogRetention, campaignDelivery, campaignScheduled];
