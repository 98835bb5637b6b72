import UploadFileIcon from '@mui/icons-material/UploadFile';
import WebhookIcon from '@mui/icons-material/Webhook';
import type { ResourceSpec } from './types';

// The integration screens' resources: CSV imports in crm, webhook endpoints in iam. Declared apart from
// the others so that they can grow without touching the shared declarations; `RESOURCES` appends them.

export const IMPORT_RESOURCES = ['leads', 'inventory', 'newsletters'] as const;
/** The lists a CSV can be imported into, and where (docs/integrators/csv-import-export.md). */
export const IMPORT_PATHS: Record<string, string> = {
  leads: '/api/crm/leads/import',
  inventory: '/api/crm/inventory/import',
  newsletters: '/api/crm/newsletters/import',
};
export const IMPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;

export const imports: ResourceSpec = {
  name: 'imports', module: 'crm', path: '/api/crm/imports', label: 'Imports', singular: 'Import', icon: UploadFileIcon,
  title: (r) => r.filename,
  readOnly: true,
  fields: [
    { source: 'created_at', label: 'Uploaded', type: 'datetime', readOnly: true, list: true },
    { source: 'filename', label: 'File', type: 'text', readOnly: true, list: true },
    { source: 'resource', label: 'Into', type: 'select', choices: IMPORT_RESOURCES, readOnly: true, list: true },
    { source: 'status', label: 'Status', type: 'select', choices: IMPORT_STATUSES, readOnly: true, list: true },
    { source: 'total_rows', label: 'Rows', type: 'number', readOnly: true, list: true },
    { source: 'created', label: 'Created', type: 'number', readOnly: true, list: true },
    { source: 'skipped', label: 'Skipped', type: 'number', readOnly: true, list: true },
    { source: 'failed', label: 'Failed', type: 'number', readOnly: true, list: true },
    { source: 'created_by', label: 'By', type: 'ref', readOnly: true, list: true, ref: { resource: 'users', param: 'created_by', text: 'name' } },
  ],
  sortable: ['created_at'],
  filters: [
    { source: 'resource', label: 'Into', type: 'select', choices: IMPORT_RESOURCES, multiple: true },
    { source: 'status', label: 'Status', type: 'select', choices: IMPORT_STATUSES, multiple: true },
  ],
};

export const webhooks: ResourceSpec = {
  name: 'webhooks', module: 'iam', path: '/api/iam/webhooks', label: 'Webhooks', singular: 'Webhook', icon: WebhookIcon,
  title: (r) => r.url,
  fields: [
    { source: 'url', label: 'URL', type: 'text', required: true, list: true },
    { source: 'description', label: 'Description', type: 'longtext', list: true },
    { source: 'events', label: 'Events', type: 'strings', required: true, list: true },
    { source: 'enabled', label: 'Enabled', type: 'boolean', list: true },
    { source: 'created_by', label: 'Created by', type: 'ref', readOnly: true, ref: { resource: 'users', param: 'created_by', text: 'name' } },
    { source: 'created_at', label: 'Created', type: 'datetime', readOnly: true, list: true },
    { source: 'updated_at', label: 'Updated', type: 'datetime', readOnly: true },
  ],
  sortable: ['created_at', 'url', 'updated_at'],
  search: true,
  filters: [{ source: 'enabled', label: 'Enabled', type: 'boolean' }],
};
