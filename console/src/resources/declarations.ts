import ApartmentIcon from '@mui/icons-material/Apartment';
import ArticleIcon from '@mui/icons-material/Article';
import BadgeIcon from '@mui/icons-material/Badge';
import CampaignIcon from '@mui/icons-material/Campaign';
import EventAvailableIcon from '@mui/icons-material/EventAvailable';
import ForumIcon from '@mui/icons-material/Forum';
import GroupsIcon from '@mui/icons-material/Groups';
import HistoryIcon from '@mui/icons-material/History';
import HomeWorkIcon from '@mui/icons-material/HomeWork';
import KeyIcon from '@mui/icons-material/Key';
import MailIcon from '@mui/icons-material/Mail';
import PeopleIcon from '@mui/icons-material/People';
import PoolIcon from '@mui/icons-material/Pool';
import ViewModuleIcon from '@mui/icons-material/ViewModule';
import WorkIcon from '@mui/icons-material/Work';
import { imports, ssoProviders, webhooks } from './integrations';
import type { FieldSpec, ResourceSpec } from './types';

// Every resource the console shows, declared once: the menu, the routes, the lists, the forms and the data
// provider all read these. Values and field names are the API's (SPEC.md, CONTRACT.md §8, §12).

const PROJECT_STATUSES = ['active', 'upcoming', 'completed', 'on-hold'] as const;
const PROJECT_TYPES = ['residential', 'commercial', 'mixed-use'] as const;
const ARTICLE_TYPES = ['news', 'announcement', 'blog'] as const;
const EMPLOYMENT_TYPES = ['full-time', 'part-time', 'contract'] as const;
const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'converted', 'lost'] as const;
const LEAD_SOURCES = ['website', 'referral', 'event', 'social'] as const;
export const UNIT_STATUSES = ['available', 'reserved', 'sold'] as const;
export const RESERVATION_STATUSES = ['pending', 'confirmed', 'cancelled'] as const;
const PAYMENT_STATUSES = ['unpaid', 'partial', 'paid'] as const;
export const INQUIRY_STATUSES = ['unread', 'read', 'responded', 'closed'] as const;
const SUBSCRIPTION_STATUSES = ['subscribed', 'unsubscribed'] as const;
export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sent'] as const;
const MODULE_NAMES = ['cms', 'crm', 'iam'] as const;
const ACTIONS = ['create', 'update', 'delete'] as const;

const created = (source = 'created_at'): FieldSpec => ({ source, label: 'Created', type: 'datetime', readOnly: true, list: true });
const updated = (source = 'updated_at'): FieldSpec => ({ source, label: 'Updated', type: 'datetime', readOnly: true });
const publishing: FieldSpec[] = [
  { source: 'published', label: 'Published', type: 'boolean', list: true },
  { source: 'publish_date', label: 'Publish date', type: 'datetime', helper: 'Empty: now, when published' },
];
const published = { source: 'published', label: 'Published', type: 'boolean' } as const;
const userRef = (source: string, label: string, param = source): FieldSpec => ({
  source, label, type: 'ref', ref: { resource: 'users', param, text: 'name' },
});

const projects: ResourceSpec = {
  name: 'projects', module: 'cms', path: '/api/cms/projects', label: 'Projects', singular: 'Project', icon: ApartmentIcon,
  title: (r) => r.name,
  fields: [
    { source: 'name', label: 'Name', type: 'text', required: true, list: true },
    { source: 'slug', label: 'Slug', type: 'text', helper: 'Empty: derived from the name' },
    { source: 'status', label: 'Status', type: 'select', choices: PROJECT_STATUSES, required: true, list: true },
    { source: 'type', label: 'Type', type: 'select', choices: PROJECT_TYPES, required: true, list: true },
    { source: 'stage', label: 'Stage', type: 'text' },
    { source: 'location', label: 'Location', type: 'text', list: true },
    { source: 'description', label: 'Description', type: 'longtext' },
    { source: 'price_range.min', label: 'Lowest price', type: 'money' },
    { source: 'price_range.max', label: 'Highest price', type: 'money' },
    { source: 'coordinates.lat', label: 'Latitude', type: 'number' },
    { source: 'coordinates.lng', label: 'Longitude', type: 'number' },
    { source: 'nearby_landmarks', label: 'Nearby landmarks', type: 'landmarks' },
    { source: 'amenities', label: 'Amenities', type: 'strings' },
    { source: 'cover_photo', label: 'Cover photo', type: 'image', list: true },
    { source: 'seo_title', label: 'SEO title', type: 'text' },
    { source: 'seo_description', label: 'SEO description', type: 'longtext' },
    { source: 'seo_keywords', label: 'SEO keywords', type: 'text', helper: 'Comma-separated' },
    ...publishing,
    created(), updated(),
  ],
  sortable: ['created_at', 'name', 'publish_date', 'updated_at'],
  search: true,
  filters: [
    { source: 'status', label: 'Status', type: 'select', choices: PROJECT_STATUSES, multiple: true },
    { source: 'type', label: 'Type', type: 'select', choices: PROJECT_TYPES, multiple: true },
  ],
  // The gallery, and a link to the project's availability board (console/src/workspace).
};

const articles: ResourceSpec = {
  name: 'articles', module: 'cms', path: '/api/cms/articles', label: 'Articles', singular: 'Article', icon: ArticleIcon,
  title: (r) => r.title,
  fields: [
    { source: 'title', label: 'Title', type: 'text', required: true, list: true },
    { source: 'slug', label: 'Slug', type: 'text', helper: 'Empty: derived from the title' },
    { source: 'type', label: 'Type', type: 'select', choices: ARTICLE_TYPES, required: true, list: true },
    { source: 'content', label: 'Content (Markdown)', type: 'longtext', required: true },
    { source: 'excerpt', label: 'Excerpt', type: 'longtext', helper: 'Empty: the first 200 characters of the content' },
    { source: 'author', label: 'Author', type: 'ref', readOnly: true, list: true, ref: { resource: 'users', param: 'author', text: 'name' } },
    { source: 'tags', label: 'Tags', type: 'strings' },
    { source: 'cover_image', label: 'Cover image', type: 'image' },
    { source: 'seo_title', label: 'SEO title', type: 'text' },
    { source: 'seo_description', label: 'SEO description', type: 'longtext' },
    ...publishing,
    created(), updated(),
  ],
  sortable: ['created_at', 'title', 'publish_date'],
  search: true,
  filters: [
    { source: 'type', label: 'Type', type: 'select', choices: ARTICLE_TYPES },
    { ...published, type: 'boolean' },
    { source: 'tag', label: 'Tag', type: 'text' },
  ],
};

const careers: ResourceSpec = {
  name: 'careers', module: 'cms', path: '/api/cms/careers', label: 'Careers', singular: 'Job posting', icon: WorkIcon,
  title: (r) => r.title,
  fields: [
    { source: 'title', label: 'Title', type: 'text', required: true, list: true },
    { source: 'slug', label: 'Slug', type: 'text', helper: 'Empty: derived from the title' },
    { source: 'department', label: 'Department', type: 'text', required: true, list: true },
    { source: 'location', label: 'Location', type: 'text', required: true, list: true },
    { source: 'employment_type', label: 'Employment type', type: 'select', choices: EMPLOYMENT_TYPES, required: true, list: true },
    { source: 'description', label: 'Description (Markdown)', type: 'longtext' },
    { source: 'salary_range.min', label: 'Lowest salary', type: 'money' },
    { source: 'salary_range.max', label: 'Highest salary', type: 'money' },
    { source: 'salary_range.currency', label: 'Salary currency', type: 'text' },
    ...publishing,
    created(), updated(),
  ],
  sortable: ['created_at', 'title', 'publish_date'],
  search: true,
  filters: [
    { source: 'department', label: 'Department', type: 'text' },
    { source: 'employment_type', label: 'Employment type', type: 'select', choices: EMPLOYMENT_TYPES },
    { ...published, type: 'boolean' },
  ],
};

const amenities: ResourceSpec = {
  name: 'amenities', module: 'cms', path: '/api/cms/amenities', label: 'Amenities', singular: 'Amenity', icon: PoolIcon,
  title: (r) => r.name,
  whole: true,
  fields: [
    { source: 'name', label: 'Name', type: 'text', required: true, list: true },
    { source: 'category', label: 'Category', type: 'text', list: true },
    { source: 'icon', label: 'Icon', type: 'text' },
    { source: 'description', label: 'Description', type: 'longtext' },
    { source: 'cover_photo', label: 'Cover photo', type: 'image' },
    created(),
  ],
  sortable: ['name', 'category', 'created_at'],
  defaultSort: 'name',
};

const leads: ResourceSpec = {
  name: 'leads', module: 'crm', path: '/api/crm/leads', label: 'Leads', singular: 'Lead', icon: PeopleIcon,
  title: (r) => `${r.first_name} ${r.last_name}`,
  fields: [
    { source: 'first_name', label: 'First name', type: 'text', required: true, list: true },
    { source: 'last_name', label: 'Last name', type: 'text', required: true, list: true },
    { source: 'email', label: 'Email', type: 'email', list: true, helper: 'An email or a phone number is required' },
    { source: 'phone', label: 'Phone', type: 'text' },
    { source: 'status', label: 'Status', type: 'select', choices: LEAD_STATUSES, list: true },
    { source: 'source', label: 'Source', type: 'select', choices: LEAD_SOURCES, list: true },
    { source: 'interest', label: 'Interest', type: 'text' },
    { source: 'notes', label: 'Notes', type: 'longtext' },
    { ...userRef('assigned_to', 'Assigned to'), list: true },
    created(), updated(),
  ],
  sortable: ['created_at', 'first_name', 'last_name', 'status', 'updated_at'],
  search: true,
  exportable: true,
  filters: [
    { source: 'status', label: 'Status', type: 'select', choices: LEAD_STATUSES, multiple: true },
    { source: 'source', label: 'Source', type: 'select', choices: LEAD_SOURCES, multiple: true },
    { source: 'assigned_to', label: 'Assigned to', type: 'ref', ref: { resource: 'users', text: 'name' } },
  ],
  // The lead's workspace under its fields: quick actions, timeline, follow-ups, reservations and inquiries.
};

const inventory: ResourceSpec = {
  name: 'inventory', module: 'crm', path: '/api/crm/inventory', label: 'Inventory', singular: 'Inventory unit', icon: HomeWorkIcon,
  title: (r) => r.inventory_code,
  fields: [
    { source: 'inventory_code', label: 'Inventory code', type: 'text', readOnly: true, list: true, helper: 'Project initials, block and lot' },
    { source: 'project', label: 'Project', type: 'ref', required: true, list: true, ref: { resource: 'projects', param: 'project_id', text: 'name' } },
    { source: 'block', label: 'Block', type: 'text', required: true, list: true },
    { source: 'lot', label: 'Lot', type: 'text', required: true, list: true },
    { source: 'house_model', label: 'House model', type: 'text' },
    { source: 'floor_area', label: 'Floor area (m²)', type: 'number' },
    { source: 'lot_area', label: 'Lot area (m²)', type: 'number' },
    { source: 'price', label: 'Price', type: 'money', required: true, list: true },
    { source: 'status', label: 'Status', type: 'select', choices: UNIT_STATUSES, list: true, helper: 'Reserve from the unit page; sold through its buyer' },

    created(),
  ],
  sortable: ['created_at', 'inventory_code', 'price', 'block', 'lot'],
  exportable: true,
  filters: [
    { source: 'project_id', label: 'Project', type: 'ref', ref: { resource: 'projects', text: 'name' } },
    { source: 'status', label: 'Status', type: 'select', choices: UNIT_STATUSES, multiple: true },
    { source: 'block', label: 'Block', type: 'text' },
    { source: 'house_model', label: 'House model', type: 'text' },
  ],
};

const reservations: ResourceSpec = {
  name: 'reservations', module: 'crm', path: '/api/crm/reservations', label: 'Reservations', singular: 'Reservation', icon: EventAvailableIcon,
  title: (r) => `${r.client_name}${r.inventory ? ` — ${r.inventory.inventory_code}` : ''}`,
  fields: [
    { source: 'inventory', label: 'Unit', type: 'ref', required: true, list: true, only: 'create', ref: { resource: 'inventory', param: 'inventory_id', text: 'inventory_code' } },
    { source: 'client_name', label: 'Client name', type: 'text', required: true, list: true },
    { source: 'contact_number', label: 'Contact number', type: 'text' },
    { source: 'email', label: 'Email', type: 'email', helper: 'A contact number or an email is required' },
    { source: 'project_name', label: 'Project', type: 'text', list: true, helper: "Empty: the unit's project" },
    { source: 'reservation_date', label: 'Reservation date', type: 'datetime', list: true },
    { source: 'status', label: 'Status', type: 'select', choices: RESERVATION_STATUSES, list: true },
    { source: 'payment_status', label: 'Payment', type: 'select', choices: PAYMENT_STATUSES, list: true },
    { source: 'notes', label: 'Notes', type: 'longtext' },
    { ...userRef('created_by', 'Created by'), readOnly: true },
    created(),
  ],
  sortable: ['created_at', 'reservation_date', 'client_name'],
  search: true,
  exportable: true,
  filters: [
    { source: 'status', label: 'Status', type: 'select', choices: RESERVATION_STATUSES },
    { source: 'payment_status', label: 'Payment', type: 'select', choices: PAYMENT_STATUSES },
    { source: 'project_name', label: 'Project name', type: 'text' },
  ],
  ranges: [{ source: 'created', label: 'Created' }, { source: 'reservation_date', label: 'Reservation date' }],
};

const inquiries: ResourceSpec = {
  name: 'inquiries', module: 'crm', path: '/api/crm/inquiries', label: 'Inquiries', singular: 'Inquiry', icon: ForumIcon,
  title: (r) => r.subject,
  fields: [
    { source: 'subject', label: 'Subject', type: 'text', required: true, list: true },
    { source: 'name', label: 'Name', type: 'text', required: true, list: true, only: 'create' },
    { source: 'email', label: 'Email', type: 'email', required: true, list: true, only: 'create' },
    { source: 'phone', label: 'Phone', type: 'text', only: 'create' },
    { source: 'message', label: 'Message', type: 'longtext', required: true, only: 'create' },
    { source: 'status', label: 'Status', type: 'select', choices: INQUIRY_STATUSES, list: true, only: 'edit' },
    { source: 'response', label: 'Response', type: 'longtext', only: 'edit', helper: 'Saving a response e-mails it to the inquirer' },
    { ...userRef('responded_by', 'Responded by'), readOnly: true },
    created(), updated(),
  ],
  sortable: ['created_at', 'status', 'updated_at'],
  search: true,
  exportable: true,
  filters: [{ source: 'status', label: 'Status', type: 'select', choices: INQUIRY_STATUSES }],
};

const newsletters: ResourceSpec = {
  name: 'newsletters', module: 'crm', path: '/api/crm/newsletters', label: 'Subscribers', singular: 'Subscriber', icon: MailIcon,
  title: (r) => r.email,
  fields: [
    { source: 'email', label: 'Email', type: 'email', required: true, list: true, only: 'create' },
    { source: 'name', label: 'Name', type: 'text', list: true },
    { source: 'status', label: 'Status', type: 'select', choices: SUBSCRIPTION_STATUSES, list: true, only: 'edit' },
    { source: 'subscribed_at', label: 'Subscribed', type: 'datetime', readOnly: true, list: true },
    { source: 'unsubscribed_at', label: 'Unsubscribed', type: 'datetime', readOnly: true },
    // The consent the subscription rests on (the website's confirmed sign-up, staff, an import).
    { source: 'consent.method', label: 'Consent given', type: 'text', readOnly: true },
    { source: 'consent.at', label: 'Consent time', type: 'datetime', readOnly: true },
    { source: 'consent.form', label: 'Consent form', type: 'text', readOnly: true },
    { source: 'consent.text', label: 'Consent wording', type: 'text', readOnly: true },
    { source: 'consent.ip', label: 'Consent IP address', type: 'text', readOnly: true },
    { source: 'consent.user_agent', label: 'Consent browser', type: 'text', readOnly: true },
  ],
  sortable: [],
  exportable: true,
  filters: [{ source: 'status', label: 'Status', type: 'select', choices: SUBSCRIPTION_STATUSES }],
  ranges: [{ source: 'subscribed', label: 'Subscribed' }],
};

const campaigns: ResourceSpec = {
  name: 'campaigns', module: 'crm', path: '/api/crm/campaigns', label: 'Campaigns', singular: 'Campaign', icon: CampaignIcon,
  title: (r) => r.name,
  fields: [
    { source: 'name', label: 'Name', type: 'text', required: true, list: true },
    { source: 'subject', label: 'Subject', type: 'text', required: true, list: true },
    { source: 'content', label: 'Content (Markdown)', type: 'longtext', required: true },
    { source: 'recipients', label: 'Recipients', type: 'strings', helper: '"all" or e-mail addresses' },
    { source: 'status', label: 'Status', type: 'select', choices: CAMPAIGN_STATUSES, readOnly: true, list: true },
    { source: 'scheduled_at', label: 'Scheduled for', type: 'datetime', readOnly: true, list: true },
    { source: 'sent_at', label: 'Sent', type: 'datetime', readOnly: true, list: true },
    { ...userRef('created_by', 'Created by'), readOnly: true },
    created(),
  ],
  sortable: ['created_at', 'name', 'scheduled_at', 'sent_at'],
  filters: [{ source: 'status', label: 'Status', type: 'select', choices: CAMPAIGN_STATUSES }],
  ranges: [{ source: 'created', label: 'Created' }, { source: 'scheduled', label: 'Scheduled' }],
};

const users: ResourceSpec = {
  name: 'users', module: 'iam', path: '/api/iam/users', label: 'Users', singular: 'User', icon: GroupsIcon,
  title: (r) => r.name,
  fields: [
    { source: 'name', label: 'Name', type: 'text', required: true, list: true },
    { source: 'email', label: 'Email', type: 'email', required: true, list: true },
    { source: 'password', label: 'Password', type: 'password', required: true, only: 'create', hideInShow: true, helper: '8+ characters: upper and lower case, a digit and another character' },
    { source: 'password', label: 'New password', type: 'password', only: 'edit', hideInShow: true, helper: 'Empty: unchanged. A new password ends their sessions' },
    { source: 'department', label: 'Department', type: 'ref', list: true, ref: { resource: 'departments', param: 'department_id', text: 'name' } },
    { source: 'emailVerified', label: 'Email verified', type: 'boolean', list: true },
    { source: 'sso_required', label: 'Require single sign-on', type: 'boolean', helper: 'Signs in only with the company\'s identity provider: password sign-in and reset are refused' },
    { source: 'image', label: 'Photo', type: 'image' },
    { source: 'createdAt', label: 'Created', type: 'datetime', readOnly: true, list: true },
    { source: 'updatedAt', label: 'Updated', type: 'datetime', readOnly: true },
  ],
  sortable: ['createdAt', 'name', 'email'],
  search: true,
  exportable: true,
  filters: [
    { source: 'department', label: 'Department', type: 'ref', ref: { resource: 'departments', text: 'name' } },
    { source: 'emailVerified', label: 'Email verified', type: 'boolean' },
  ],
};

const departments: ResourceSpec = {
  name: 'departments', module: 'iam', path: '/api/iam/departments', label: 'Departments', singular: 'Department', icon: BadgeIcon,
  title: (r) => r.name,
  whole: true,
  fields: [
    { source: 'name', label: 'Name', type: 'text', required: true, list: true },
    // A department's manager may change the lead-flow settings and hears of its agents' late first contacts.
    { source: 'manager_id', label: 'Manager', type: 'ref', ref: { resource: 'users', param: 'manager_id', text: 'name', idOnly: true }, list: true, helper: 'May change lead-flow settings; told when an agent is late to contact a lead' },
  ],
  sortable: ['name'],
  defaultSort: 'name',
};

const activityLogs: ResourceSpec = {
  name: 'activity-logs', module: 'iam', path: '/api/iam/activity-logs', label: 'Activity log', singular: 'Activity', icon: HistoryIcon,
  title: (r) => `${r.action} ${r.resource}`,
  readOnly: true,
  fields: [
    { source: 'created_at', label: 'When', type: 'datetime', readOnly: true, list: true },
    { source: 'user', label: 'User', type: 'ref', readOnly: true, list: true, ref: { resource: 'users', param: 'user_id', text: 'name' } },
    { source: 'action', label: 'Action', type: 'select', choices: ACTIONS, readOnly: true, list: true },
    { source: 'module', label: 'Module', type: 'select', choices: MODULE_NAMES, readOnly: true, list: true },
    { source: 'resource', label: 'Resource', type: 'text', readOnly: true, list: true },
    { source: 'resource_id', label: 'Record', type: 'text', readOnly: true },
    { source: 'ip_address', label: 'IP address', type: 'text', readOnly: true },
    { source: 'user_agent', label: 'User agent', type: 'text', readOnly: true },
  ],
  sortable: ['created_at'],
  exportable: true,
  filters: [
    { source: 'user_id', label: 'User', type: 'ref', ref: { resource: 'users', text: 'name' } },
    { source: 'module', label: 'Module', type: 'select', choices: MODULE_NAMES },
    { source: 'action', label: 'Action', type: 'select', choices: ACTIONS },
    { source: 'date_from', label: 'From (day)', type: 'date' },
    { source: 'date_to', label: 'To (day)', type: 'date' },
  ],
  // Its own From/To (day) filters are the date range.
  ranges: [],
  noHistory: true,
};

/** Everyone's API tokens, for iam readers; revoked with iam delete. Each user makes their own under My account. */
const apiTokens: ResourceSpec = {
  name: 'api-tokens', module: 'iam', path: '/api/iam/api-tokens', label: 'API tokens', singular: 'API token', icon: KeyIcon,
  title: (r) => r.name,
  readOnly: true,
  deletable: 'Revoke',
  fields: [
    { source: 'name', label: 'Name', type: 'text', readOnly: true, list: true },
    { source: 'prefix', label: 'Prefix', type: 'text', readOnly: true, list: true },
    { source: 'user', label: 'Owner', type: 'ref', readOnly: true, list: true, ref: { resource: 'users', param: 'user_id', text: 'name' } },
    { source: 'permissions', label: 'Permissions', type: 'permissions', readOnly: true, list: true },
    { source: 'expires_at', label: 'Expires', type: 'datetime', readOnly: true, list: true },
    { source: 'last_used_at', label: 'Last used', type: 'datetime', readOnly: true, list: true },
    created(),
  ],
  sortable: ['created_at'],
  filters: [{ source: 'user_id', label: 'Owner', type: 'ref', ref: { resource: 'users', text: 'name' } }],
};

/** The integration screens (imports in crm, webhooks and SSO providers in iam), declared in ./integrations. */
const INTEGRATIONS = [imports, webhooks, ssoProviders];

export const RESOURCES: readonly ResourceSpec[] = [
  projects, articles, careers, amenities,
  leads, inventory, reservations, inquiries, newsletters, campaigns,
  users, departments, activityLogs, apiTokens,
  ...INTEGRATIONS,
];

const byName = new Map(RESOURCES.map((spec) => [spec.name, spec]));

/** The declaration of a resource by its name; throws for a name nobody declared. */
export function specOf(name: string): ResourceSpec {
  const spec = byName.get(name);
  if (!spec) throw new Error(`No resource named ${name}`);
  return spec;
}

export const moduleIcon = ViewModuleIcon;
