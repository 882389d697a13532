import { describe, expect, it } from 'vitest'
import { loginReason, needsLogin, safeRedirect } from './access'
import { activeHeaderKey, homeTarget } from './routes'
import { useLoginDialogStore } from '../stores/loginDialog'

describe('what a visitor may open', () => {
  it('asks for an account exactly where the guard would', () => {
    expect(needsLogin('/papercheck/check')).toBe(false)
    expect(needsLogin('/dashboard')).toBe(false)
    expect(needsLogin('/')).toBe(false)
    expect(needsLogin('/verify')).toBe(false)
    expect(needsLogin('/m/qr/abc')).toBe(false)
    expect(needsLogin('/aigccheck/check')).toBe(true)
    expect(needsLogin('/proaigcsubmit/promachine')).toBe(true)
    expect(needsLogin('/order/account')).toBe(true)
    // The refresh helper is judged by the page it refreshes.
    expect(needsLogin('/redirect/papercheck/check')).toBe(false)
    expect(needsLogin('/redirect/order/account')).toBe(true)
  })

  it('says which page asked', () => {
    expect(loginReason('/aigccheck/check')).toBe('请先登录后使用 AIGC检测')
    expect(loginReason('/proaigcsubmit/promachine')).toBe('请先登录后使用 降AIGC')
    expect(loginReason('/aigccheck/content/12?x=1')).toBe('请先登录后使用 检测详情')
    expect(loginReason('/nowhere')).toBe('请先登录后继续')
  })

  it('continues only to paths of this site', () => {
    expect(safeRedirect('/aigccheck/list')).toBe('/aigccheck/list')
    expect(safeRedirect('//evil.example')).toBeUndefined()
    expect(safeRedirect('/\\evil.example')).toBeUndefined()
    expect(safeRedirect('https://evil.example')).toBeUndefined()
    expect(safeRedirect(null)).toBeUndefined()
  })

  it('the dialog keeps a reason and a destination, and ignores a click event passed as a request', () => {
    const store = useLoginDialogStore.getState()
    store.open({ reason: '请先登录后使用 AIGC检测', redirect: '/aigccheck/check' })
    expect(useLoginDialogStore.getState()).toMatchObject({ visible: true, reason: '请先登录后使用 AIGC检测', redirect: '/aigccheck/check' })
    store.close()
    expect(useLoginDialogStore.getState()).toMatchObject({ visible: false, reason: undefined, redirect: undefined })
    store.open({ type: 'click' } as never)
    expect(useLoginDialogStore.getState()).toMatchObject({ visible: true, reason: undefined, redirect: undefined })
    store.close()
  })
})

describe('首页', () => {
  it('opens the marketing site when one is configured, else our own service overview', () => {
    expect(homeTarget('https://wenjian.example.com')).toEqual({ external: 'https://wenjian.example.com' })
    expect(homeTarget('')).toEqual({ path: '/dashboard' })
    expect(homeTarget('   ')).toEqual({ path: '/dashboard' })
    expect(homeTarget(undefined)).toEqual({ path: '/dashboard' })
    expect(homeTarget('javascript:alert(1)')).toEqual({ path: '/dashboard' })
    expect(activeHeaderKey('/dashboard')).toBe('home')
  })
})
