import { create } from 'zustand'
import * as userApi from '../api/user'
import { getToken, removeToken, setToken } from '../utils/auth'
import { zhCN } from '../locales/zh-CN'

interface UserState {
  token: string | null
  id: number | null
  loginName: string
  name: string
  avatar: string
  introduction: string
  roles: string[]
  /** May use the operator console (/admin/…). */
  operator: boolean
  /** True while browsing without a token (whitelisted pages only). */
  anonymous: boolean
  loginWithPassword: (username: string, password: string) => Promise<void>
  registerAccount: (username: string, password: string) => Promise<void>
  acceptToken: (token: string) => void
  getInfo: () => Promise<userApi.UserInfo>
  becomeAnonymous: () => void
  logout: () => Promise<void>
  resetToken: () => void
}

const emptyProfile = { id: null, loginName: '', name: '', avatar: '', introduction: '', roles: [] as string[], operator: false }

export const useUserStore = create<UserState>((set, get) => ({
  token: getToken(),
  ...emptyProfile,
  anonymous: false,
  loginWithPassword: async (username, password) => {
    const result = await userApi.login(username.trim(), password)
    get().acceptToken(result.access_token)
  },
  registerAccount: async (username, password) => {
    const result = await userApi.register(username.trim(), password)
    get().acceptToken(result.access_token)
  },
  acceptToken: (token) => {
    setToken(token)
    // Roles are cleared so the guard fetches the new user's info.
    set({ token, ...emptyProfile, anonymous: false })
  },
  getInfo: async () => {
    const info = await userApi.getInfo()
    if (!info) throw new Error(zhCN.verificationFailed)
    if (!info.roles || info.roles.length === 0) throw new Error('getInfo: roles must be a non-null array!')
    set({
      id: info.id,
      loginName: info.loginName,
      name: info.name,
      avatar: info.avatar,
      introduction: info.introduction,
      roles: info.roles,
      operator: info.operator === true,
      anonymous: false,
    })
    return info
  },
  // Visitors get a default avatar and the admin role, as the spec's template does.
  becomeAnonymous: () => set({ ...emptyProfile, roles: ['admin'], anonymous: true }),
  logout: async () => {
    try {
      await userApi.logout()
    } finally {
      get().resetToken()
    }
  },
  resetToken: () => {
    removeToken()
    set({ token: null, ...emptyProfile, anonymous: false })
  },
}))
