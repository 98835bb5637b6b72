import { type ComponentType, lazy } from 'react';

/**
 * The screens a resource has of its own, by resource name (each loaded when first shown). Apart from the declarations
 * (resources/), which only describe resources: the screens import the declarations and the providers, so the
 * declarations must not import the screens. App.tsx and the generic detail page read this.
 */
export type OwnScreens = {
  /** Screens instead of the generic ones. */
  screens?: Partial<Record<'list' | 'show' | 'edit' | 'create', ComponentType>>;
  /** Extra panels under the generic detail page (a project's gallery, a unit's reservation). */
  showExtras?: ComponentType;
};

const OWN_SCREENS: Record<string, OwnScreens> = {
  projects: {
    showExtras: lazy(() => import('../workspace/ProjectExtras')),
  },
  leads: {
    showExtras: lazy(() => import('../workspace/LeadWorkspace')),
  },
  inventory: {
    showExtras: lazy(() => import('../crm/UnitActions')),
  },
  campaigns: {
    screens: {
      show: lazy(() => import('../crm/CampaignEditor').then((m) => ({ default: m.CampaignShow }))),
      edit: lazy(() => import('../crm/CampaignEditor').then((m) => ({ default: m.CampaignEdit }))),
      create: lazy(() => import('../crm/CampaignEditor').then((m) => ({ default: m.CampaignCreate }))),
    },
  },
  users: {
    showExtras: lazy(() => import('../iam/ModuleAccessMatrix')),
  },
  'activity-logs': {
    screens: { show: lazy(() => import('../iam/ActivityLogShow')) },
  },
  imports: {
    screens: { show: lazy(() => import('../integrations/ImportShow')) },
  },
  webhooks: {
    screens: {
      show: lazy(() => import('../integrations/WebhookShow')),
      create: lazy(() => import('../integrations/WebhookForm').then((m) => ({ default: m.WebhookCreate }))),
      edit: lazy(() => import('../integrations/WebhookForm').then((m) => ({ default: m.WebhookEdit }))),
    },
  },
};

/** What a resource has of its own (nothing: every screen is the generic one). */
export const ownScreensOf = (name: string): OwnScreens => OWN_SCREENS[name] ?? {};
