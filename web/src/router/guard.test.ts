import { beforeEach, describe, expect, it, vi } from 'vitest'

vi.mock('../api/user', () => ({ getInfo: vi.fn() }))
vi.mock('../utils/feedback', () => ({ toastError: vi.fn() }))

import * as userApi from '../api/user'
import { toastError } from '../utils/feedback'
import { guardLoader } from './guard'
import { useUserStore } from '../stores/user'
import { usePermissionStore } from '../stores/permission'

const run = (path: string) =>
  guardLoader({ request: new Request(`http://localhost${path}`), params: {}, context: undefined } as never) as Promise<Response | null>

const location = (res: Response | null) => res?.headers.get('Location')

const info = { id: 7, loginName: 'amy', name: 'amy', avatar: '', introduction: '', roles: ['admin'], operator: false, createdAt: 0 }

describe('navigation guard', () => {
  beforeEach(() => {
    localStorage.clear()
    useUserStore.getState().resetToken()
    usePermissionStore.setState({ groups: [] })
    vi.mocked(userApi.getInfo).mockReset()
    vi.mocked(toastError).mockReset()
  })

  it('lets visitors open whitelisted paths as the anonymous admin', async () => {
    expect(await run('/papercheck/check')).toBeNull()
    const user = useUserStore.getState()
    expect(user.anonymous).toBe(true)
    expect(user.roles).toEqual(['admin'])
    expect(usePermissionStore.getState().groups.length).toBeGreaterThan(0)
  })

  it('lets visitors open / (it only redirects to the check page) and the service overview', async () => {
    expect(await run('/')).toBeNull()
    expect(await run('/dashboard')).toBeNull()
  })

  it('sends visitors elsewhere to /login with a redirect query', async () => {
    expect(location(await run('/aipaper/list'))).toBe('/login?redirect=/aipaper/list')
  })

  it('sends a signed-in user from /login to /', async () => {
    localStorage.setItem('Admin-Token', 't')
    expect(location(await run('/login'))).toBe('/')
  })

  it('fetches user info once, then proceeds without fetching again', async () => {
    localStorage.setItem('Admin-Token', 't')
    vi.mocked(userApi.getInfo).mockResolvedValue(info)
    expect(await run('/aipaper/list')).toBeNull()
    expect(await run('/aippt/list')).toBeNull()
    expect(userApi.getInfo).toHaveBeenCalledTimes(1)
    expect(useUserStore.getState().id).toBe(7)
  })

  it('clears the token and shows the message when user info fails', async () => {
    localStorage.setItem('Admin-Token', 't')
    vi.mocked(userApi.getInfo).mockRejectedValue(new Error('未登录、请登录后使用!'))
    expect(location(await run('/order/account'))).toBe('/login?redirect=/order/account')
    expect(localStorage.getItem('Admin-Token')).toBeNull()
    expect(toastError).toHaveBeenCalledWith('未登录、请登录后使用!')
  })

  it("falls back to 'Has Error' when the failure has no message", async () => {
    localStorage.setItem('Admin-Token', 't')
    vi.mocked(userApi.getInfo).mockRejectedValue(new Error(''))
    await run('/order/account')
    expect(toastError).toHaveBeenCalledWith('Has Error')
  })

  it("says 'Verification failed, please Login again.' when no user comes back", async () => {
    localStorage.setItem('Admin-Token', 't')
    vi.mocked(userApi.getInfo).mockResolvedValue(undefined as never)
    await run('/order/account')
    expect(toastError).toHaveBeenCalledWith('Verification failed, please Login again.')
  })
})
