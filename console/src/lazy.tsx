import { type ComponentType, lazy, type LazyExoticComponent, Suspense } from 'react';
import { Loading } from 'react-admin';

/** A screen loaded when first shown (its own chunk), with a loading indicator meanwhile. */
export function screen(Component: LazyExoticComponent<ComponentType<any>> | ComponentType<any>): ComponentType<any> {
  const Screen = () => (
    <Suspense fallback={<Loading loadingPrimary="Loading" loadingSecondary="" />}>
      <Component />
    </Suspense>
  );
  return Screen;
}

export const GenericList = lazy(() => import('./screens/List'));
export const GenericShow = lazy(() => import('./screens/Show'));
export const GenericEdit = lazy(() => import('./screens/EditScreen'));
export const GenericCreate = lazy(() => import('./screens/CreateScreen'));
