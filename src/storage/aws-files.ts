/**
 * The AWS shared files a CoreOS `awsSecret` holds: `credentials` (access keys) and `config` (region), in
 * INI form with profiles. Only the default profile is read, as the CoreOS operator did.
 */
export interface AwsProfile {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

function parseIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    // Whole-line comments only: a secret may contain "#".
    if (line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*(.+?)\s*\]$/.exec(line);
    if (header?.[1]) {
      // The config file names profiles "profile x", except the default.
      const name = header[1].replace(/^profile\s+/, '');
      current = sections.get(name) ?? new Map<string, string>();
      sections.set(name, current);
      continue;
    }
    const eq = line.indexOf('=');
    if (current && eq > 0) current.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return sections;
}

export function awsProfile(credentials: string, config: string): AwsProfile {
  const creds = parseIni(credentials).get('default');
  const accessKeyId = creds?.get('aws_access_key_id');
  const secretAccessKey = creds?.get('aws_secret_access_key');
  if (!accessKeyId || !secretAccessKey) throw new Error('the credentials file has no [default] aws_access_key_id and aws_secret_access_key');
  return { accessKeyId, secretAccessKey, region: parseIni(config).get('default')?.get('region') ?? 'us-east-1' };
}
