import { lazy } from 'react';
import { Admin, CustomRoutes, Resource } from 'react-admin';
import { BrowserRouter, Route } from 'react-router-dom';
import { authProvider } from './api/authProvider';
import { dataProvider } from './api/dataProvider';
import { queryClient } from './api/queryClient';
import { LoginPage } from './auth/LoginPage';
import { GenericCreate, GenericEdit, GenericList, GenericShow, screen } from './lazy';
import { Layout } from './layout/Layout';
import { RESOURCES } from './resources/declarations';
import { ownScreensOf } from './screens/registry';
import { theme } from './theme';

const Home = screen(lazy(() => import('./lead-flow/home')));
const Dashboard = screen(lazy(() => import('./dashboard/Dashboard')));
const MyDay = screen(lazy(() => import('./lead-flow/MyDay')));
const LeadFlowSettings = screen(lazy(() => import('./lead-flow/LeadFlowSettings')));
const Account = screen(lazy(() => import('./account/AccountPage')));
const ForgotPassword = screen(lazy(() => import('./auth/ForgotPasswordPage')));
const ResetPassword = screen(lazy(() => import('./auth/ResetPasswordPage')));
const Pipeline = screen(lazy(() => import('./workspace/PipelineBoard')));
const Availability = screen(lazy(() => import('./workspace/AvailabilityBoard')));
const Trash = screen(lazy(() => import('./undo/TrashPage')));
const Reports = screen(lazy(() => import('./reports/ReportsPage')));
const PrivacyRequests = screen(lazy(() => import('./crm/PrivacyRequestsPage')));

// One <Resource> per declaration; a screen of its own (screens/registry.ts) replaces the generic one where the product differs.
const resources = RESOURCES.map((spec) => {
  const own = ownScreensOf(spec.name).screens ?? {};
  return (
    <Resource
      key={spec.name}
      name={spec.name}
      options={{ label: spec.label }}
      icon={spec.icon}
      recordRepresentation={spec.title}
      list={screen(own.list ?? GenericList)}
      show={screen(own.show ?? GenericShow)}
      edit={spec.readOnly ? undefined : screen(own.edit ?? GenericEdit)}
      create={spec.readOnly ? undefined : screen(own.create ?? GenericCreate)}
    />
  );
});

export function App() {
  return (
    <BrowserRouter>
      <Admin
        title="Property Management"
        queryClient={queryClient}
        dataProvider={dataProvider}
        authProvider={authProvider}
        loginPage={LoginPage}
        dashboard={Home}
        layout={Layout}
        theme={theme}
        disableTelemetry
      >
        <CustomRoutes noLayout>
          <Route path="/forgot-password" element={<ForgotPassword />} />
          <Route path="/reset-password" element={<ResetPassword />} />
        </CustomRoutes>
        <CustomRoutes>
          <Route path="/account" element={<Account />} />
          <Route path="/dashboard" element={<Dashboard />} />
          <Route path="/my-day" element={<MyDay />} />
          <Route path="/lead-flow" element={<LeadFlowSettings />} />
          <Route path="/crm/pipeline" element={<Pipeline />} />
          <Route path="/crm/availability/:projectId?" element={<Availability />} />
          <Route path="/reports/:report?" element={<Reports />} />
          <Route path="/trash/:module" element={<Trash />} />
          <Route path="/crm/privacy-requests" element={<PrivacyRequests />} />
        </CustomRoutes>
        {resources}
      </Admin>
    </BrowserRouter>
  );
}
