import { useResourceContext } from 'react-admin';
import { specOf } from '../resources/declarations';

/** The declaration of the resource whose screen this is. */
export const useSpec = () => specOf(useResourceContext()!);
