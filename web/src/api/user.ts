import { get, post } from './client'

export interface LoginResult {
  access_token: string
  token_type: string
  expires_at: number
}

export interface UserInfo {
  id: number
  loginName: string
  name: string
  avatar: string
  introduction: string
  roles: string[]
  operator: boolean
  createdAt: number
}

export interface QrCode {
  id: string
  qrCode: string
  expiresAt: number
  expiresInSeconds: number
}

export interface QrInfo {
  id: string
  status: 'pending' | 'confirmed' | 'consumed' | 'expired'
  provider: string
  requesterIp: string
  requesterAgent: string
  createdAt: number
  expiresAt: number
}

export interface LedgerRow {
  id: number
  kind: string
  deltaFen: number
  deltaFreeChecks: number
  balanceAfterFen: number
  freeChecksAfter: number
  reason: string
  createdAt: number
}

export interface GrantRow {
  kind: string
  label: string
  total: number
  remaining: number
  /** 次, 字, 篇 or 份. */
  unit: string
  expiresAt: number
}

/** One task a package paid for. */
export interface GrantUseRow {
  package: string
  kind: string
  /** What stays used (0 once given back in full). */
  units: number
  unit: string
  reason: string
  taskId: number
  createdAt: number
}

export interface AccountInfo {
  userId: number
  loginName: string
  balanceFen: number
  freeCheckCredits: number
  /** Packages' uses still open (older servers send none). */
  grants?: GrantRow[]
  /** The latest tasks packages paid for, newest first. */
  grantUses?: GrantUseRow[]
  ledger: LedgerRow[]
}

export interface SiteConfig {
  siteTitle: string
  marketingUrl: string
  qrProvider: string
  version: string
  /** 对话改写's price per started 1,000 characters, in fen. */
  chatPriceFenPerThousand: number
  /** The IANA zone every time is shown in, and how it is named (北京时间). */
  timeZone: string
  timeZoneLabel: string
  /** 论文生成's prices by length (fen). */
  paperPriceTiers?: { words: number; fen: number }[]
  /** Who writes generated papers: local (short, weak drafts), endpoint, or none. */
  paperWriter?: 'local' | 'endpoint' | 'none'
  paperUnavailable?: string | null
}

// Login failures are shown by the form itself, so these calls stay silent. Credentials go in
// the JSON body, never the query string (the server refuses that: `credentials_in_url`).
export const login = (username: string, password: string) =>
  post<LoginResult>('api/base/login_api/f/login', { data: { username, password }, silent: true })

export const register = (username: string, password: string) =>
  post<LoginResult>('api/base/login_api/f/register', { data: { username, password }, silent: true })

export const getInfo = () => post<UserInfo>('api/base/login_api/current', { silent: true })

export const logout = () => post<boolean>('api/base/login_api/logout', { silent: true })

export const changePassword = (old_password: string, new_password: string) =>
  post<boolean>('api/base/login_api/change_password', { data: { old_password, new_password }, silent: true })

export const getLoginQrCode = () => post<QrCode>('api/base/login_api/f/login_qr_code', { silent: true })

export const valLoginQrCode = (id: string) =>
  post<LoginResult | false>('api/base/login_api/f/val_login_qr_code', { params: { id }, silent: true })

export const getQrInfo = (id: string) => post<QrInfo>('api/base/login_api/f/qr_info', { params: { id }, silent: true })

export const confirmQr = (id: string) => post<boolean>('api/base/login_api/qr_confirm', { params: { id }, silent: true })

export const getAccount = () => get<AccountInfo>('/api/base/account_info_api/account')

export const getSiteConfig = () => get<SiteConfig>('/api/base/site_api/f/config', { silent: true })
