// User-facing texts in one place. Some strings are kept exactly as the product spec names them.
export const zhCN = {
  siteTitle: '文鉴',
  notLoggedIn: '未登录、请登录后使用!',
  verificationFailed: 'Verification failed, please Login again.',
  hasError: 'Has Error',
  fullscreenUnsupported: 'you browser can not work',
  networkError: '网络异常，请检查网络后重试',
  timeout: '请求超时，请稍后重试',
  dismissLogin: '残忍拒绝，继续浏览',
  tags: { refresh: '刷新', close: '关闭', closeOthers: '关闭其他', closeAll: '关闭所有' },
  sizes: { default: '默认', medium: '中等', small: '小', mini: '迷你' },
} as const
