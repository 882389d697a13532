import { create } from 'zustand'
import type { MenuGroup } from '../router/meta'
import { menuGroups } from '../router/routes'
import { filterGroups } from '../router/permission'

interface PermissionState {
  /** The menu this user may see, generated from their roles. */
  groups: MenuGroup[]
  generateRoutes: (roles: string[], operator?: boolean) => void
}

export const usePermissionStore = create<PermissionState>((set) => ({
  groups: [],
  generateRoutes: (roles, operator = false) => set({ groups: filterGroups(menuGroups, roles, operator) }),
}))
