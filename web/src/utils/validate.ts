/** An external link starts with http(s):, mailto: or tel:. */
export function isExternal(path: string): boolean {
  return /^(https?:|mailto:|tel:)/.test(path)
}

/** Only these two names count in the template's username helper. */
export function validUsername(name: string): boolean {
  return ['admin', 'editor'].includes(name.trim())
}

/**
 * The rule the server enforces on registration: 4–32 ASCII letters, digits, CJK ideographs or
 * _ - . @ (full-width forms and look-alike letters of other scripts are refused).
 */
export function validNewUsername(name: string): boolean {
  const chars = Array.from(name.trim())
  return (
    chars.length >= 4 && chars.length <= 32 && chars.every((c) => /^(?:[A-Za-z0-9_\-.@]|\p{Unified_Ideograph})$/u.test(c))
  )
}

/** Caps-lock state from a keyboard event, for password fields. */
export function capsLockOn(event: { getModifierState?: (key: 'CapsLock') => boolean }): boolean {
  return Boolean(event.getModifierState?.('CapsLock'))
}

/** Common passwords that have letters and digits (the server refuses a longer list; the others fail the rules above anyway). */
const COMMON_PASSWORDS = new Set([
  '123456abc', 'a1234567', 'a12345678', 'a123456789', 'aa123456', 'aa12345678', 'abc12345', 'abc123456', 'abcd1234',
  'qq123456', 'qwerty123', 'asdf1234', 'zxcvbnm123', '1qaz2wsx', '1q2w3e4r', '1q2w3e4r5t', 'q1w2e3r4', 'zaq12wsx',
  'password1', 'password123', 'passw0rd', 'p@ssw0rd', 'iloveyou1', 'woaini1314', 'woaini520', 'admin123', 'admin888',
  'admin1234', 'letmein1', 'welcome1', 'trustno1',
])

/** The rule a new password must meet, as shown under the password field. */
export const PASSWORD_RULE = '至少 8 位，需同时包含字母和数字，不能包含用户名'

/**
 * Why a new password (registration, password change) is refused, or null when it is fine:
 * 8–128 characters, not only spaces, letters and digits both, not containing the user name
 * (ignoring case), not a common password. The server checks the same, except letters and digits.
 */
export function passwordProblem(password: string, username = ''): string | null {
  const count = Array.from(password).length
  if (count < 8) return '密码至少需要 8 个字符'
  if (count > 128) return '密码不能超过 128 个字符'
  if (!password.trim()) return '密码不能全是空格'
  if (!/[A-Za-z]/.test(password) || !/[0-9]/.test(password)) return '密码需同时包含字母和数字'
  const name = username.trim().toLowerCase()
  if (name && password.toLowerCase().includes(name)) return '密码不能包含用户名'
  if (COMMON_PASSWORDS.has(password.trim().toLowerCase())) return '该密码过于常见，请换一个'
  return null
}
