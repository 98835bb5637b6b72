import AltRouteIcon from '@mui/icons-material/AltRoute';
import AssessmentIcon from '@mui/icons-material/Assessment';
import DashboardIcon from '@mui/icons-material/Dashboard';
import DeleteSweepIcon from '@mui/icons-material/DeleteSweep';
import PrivacyTipIcon from '@mui/icons-material/PrivacyTip';
import ManageAccountsIcon from '@mui/icons-material/ManageAccounts';
import TodayIcon from '@mui/icons-material/Today';
import ViewKanbanIcon from '@mui/icons-material/ViewKanban';
import GridViewIcon from '@mui/icons-material/GridView';
import { ListSubheader } from '@mui/material';
import type { ReactNode } from 'react';
import { AppBar, Layout as RaLayout, LoadingIndicator, Logout, Menu, MenuItemLink, UserMenu, useGetIdentity, usePermissions, useSidebarState } from 'react-admin';
import { can, type Permission } from '../api/authProvider';
import { homeIsMyDay } from '../lead-flow/access';
import { LiveUpdates } from '../live/useLive';
import { RESOURCES } from '../resources/declarations';
import { MODULE_LABELS, MODULES } from '../resources/types';
import { NotificationBell } from './NotificationBell';

function AccountMenu() {
  const { identity } = useGetIdentity();
  // The button shows the user's name; its accessible name must contain it (WCAG 2.5.3).
  return (
    <UserMenu label={identity?.fullName ? `${identity.fullName}: account menu` : 'Account menu'}>
      <MenuItemLink to="/account" primaryText="My account" leftIcon={<ManageAccountsIcon />} />
      <Logout />
    </UserMenu>
  );
}

/** The navigation: the dashboard, then each module the user may read, with its resources. */
function Navigation() {
  const { permissions } = usePermissions<Permission[]>();
  const [open] = useSidebarState();
  return (
    <Menu>
      {/* Where My day is the home page, the dashboard has an address of its own. */}
      {homeIsMyDay(permissions) ? <Menu.Item to="/dashboard" primaryText="Dashboard" leftIcon={<DashboardIcon />} /> : <Menu.DashboardItem primaryText="Dashboard" />}
      {MODULES.filter((module) => can(permissions, module, 'read')).map((module) => (
        <div key={module} role="group" aria-label={MODULE_LABELS[module]}>
          {open ? <ListSubheader component="div" aria-hidden sx={{ lineHeight: '32px', bgcolor: 'transparent' }}>{MODULE_LABELS[module]}</ListSubheader> : null}
          {module === 'crm' ? (
            <>
              <Menu.Item to="/my-day" primaryText="My day" leftIcon={<TodayIcon />} />
              <Menu.Item to="/crm/pipeline" primaryText="Pipeline" leftIcon={<ViewKanbanIcon />} />
              <Menu.Item to="/crm/availability" primaryText="Availability" leftIcon={<GridViewIcon />} />
              <Menu.Item to="/lead-flow" primaryText="Lead flow" leftIcon={<AltRouteIcon />} />
              <Menu.Item to="/reports" primaryText="Reports" leftIcon={<AssessmentIcon />} />
            </>
          ) : null}
          {RESOURCES.filter((spec) => spec.module === module).map((spec) => (
            <Menu.ResourceItem key={spec.name} name={spec.name} />
          ))}
          {module !== 'iam' && can(permissions, module, 'delete') ? <Menu.Item to={`/trash/${module}`} primaryText="Trash" leftIcon={<DeleteSweepIcon />} /> : null}
          {module === 'crm' && can(permissions, module, 'delete') ? <Menu.Item to="/crm/privacy-requests" primaryText="Privacy requests" leftIcon={<PrivacyTipIcon />} /> : null}
        </div>
      ))}
    </Menu>
  );
}

/** The app bar: the notification bell beside react-admin's loading indicator (its refresh button), then the account menu. */
const TopBar = () => <AppBar userMenu={<AccountMenu />} toolbar={<><NotificationBell /><LoadingIndicator /></>} />;

/** The signed-in console: the live stream keeps every screen's data current while it is shown. */
export function Layout({ children }: { children: ReactNode }) {
  return (
    <RaLayout appBar={TopBar} menu={Navigation}>
      <LiveUpdates />
      {children}
    </RaLayout>
  );
}
