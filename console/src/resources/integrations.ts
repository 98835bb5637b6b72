import UploadFileIcon from '@mui/icons-material/UploadFile';
import VpnKeyIcon from '@mui/icons-material/VpnKey';
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

/**
 * Identity providers for single sign-on (iam). The one set by environment (id `oidc`) is listed read-only; the client
 * secret is written only (empty on edit: unchanged).
 */
export const ssoProviders: ResourceSpec = {
  name: 'sso-providers', module: 'iam', path: '/api/iam/sso-providers', label: 'SSO providers', singular: 'SSO provider', icon: VpnKeyIcon,
  title: (r) => r.name,
  whole: true,
  noHistory: true,
  fields: [
    { source: 'name', label: 'Name', type: 'text', required: true, list: true, helper: 'The sign-in button says "Sign in with <name>"' },
    { source: 'issuer', label: 'Issuer URL', type: 'text', required: true, list: true, helper: 'e.g. https://accounts.google.com, https://login.microsoftonline.com/<tenant>/v2.0, https://<org>.okta.com' },
    { source: 'client_id', label: 'Client ID', type: 'text', required: true },
    { source: 'client_secret', label: 'Client secret', type: 'password', required: true, only: 'create', hideInShow: true, helper: 'Stored, never shown again' },
    { source: 'client_secret', label: 'New client secret', type: 'password', only: 'edit', hideInShow: true, helper: 'Empty: unchanged' },
    { source: 'scopes', label: 'Scopes', type: 'text', helper: 'Space-separated; must include openid (default: openid email profile)' },
    { source: 'enabled', label: 'Enabled', type: 'boolean', list: true, helper: 'A disabled provider has no button and its sign-ins are refused' },
    { source: 'jit', label: 'Provision users', type: 'boolean', list: true, helper: 'Unknown (verified) e-mail addresses become users, with the department and permissions below' },
    { source: 'jit_department', label: 'Department of new users', type: 'ref', ref: { resource: 'departments', param: 'jit_department_id', text: 'name' } },
    { source: 'jit_grants', label: 'Permissions of new users', type: 'permissions' },
    { source: 'redirect_uri', label: 'Redirect URL to register at the provider', type: 'text', readOnly: true },
    { source: 'read_only', label: 'Set by environment', type: 'boolean', readOnly: true, list: true },
  ],
  sortable: ['name'],
  defaultSort: 'name',
};
